"""Rating in the browser: tasks of (query, document) pairs graded by invited people
(``evalplat rate``), closed into a new test set version."""
