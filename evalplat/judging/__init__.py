"""Judgments from a language model: a judge behind an OpenAI-compatible chat-completions
endpoint grades (query, document) pairs, after calibration against the team's own raters.

- ``spec``: the ``[[judges]]`` table of ``evalplat.toml``;
- ``prompts``: the built-in UMBRELA-style prompt and sandboxed custom Jinja prompts;
- ``answers``: strict parsing of the model's answer (no grade is a failure, never a guess);
- ``client``: the HTTP client (structured output, plain-text fallback, retries, budget);
- ``batch``: bounded concurrency, the budget and the time limit over many pairs;
- ``job``: ``evalplat judge`` (a new test set version) and ``judge calibrate``;
- ``calibration``: confusion matrix, weighted kappa, Krippendorff's alpha, bias per grade.
"""
