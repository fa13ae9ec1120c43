"""What every layer accepts from outside, below the database.

- ``validation``: the input contract (ids, names, grades, scores, free text);
- ``env``: ``${VAR}`` expansion of secrets in config parameters, URLs and channels;
- ``toml_lines``: where a table or key sits in a TOML file, for messages that name the line.
"""
