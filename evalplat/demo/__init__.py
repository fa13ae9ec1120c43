"""``evalplat demo``: a self-contained project over the bundled Cranfield collection (``build``)."""
