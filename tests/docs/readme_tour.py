"""Split the shell blocks of a page (the README's CLI tour, docs/adoption.md) into the commands a
reader would type."""

from __future__ import annotations

import re


def tour_commands(readme: str) -> list[str]:
    """Commands of the README's CLI tour (its one bash block)."""
    tour = readme.split("## CLI tour", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```bash\n(.*?)```", tour, flags=re.S)
    return block_commands(block)


def page_commands(page: str) -> list[str]:
    """Commands of every bash block of a page, in order."""
    return [c for block in re.findall(r"```bash\n(.*?)```", page, flags=re.S)
            for c in block_commands(block)]  # fmt: skip


def block_commands(block: str) -> list[str]:
    """One block's commands: continuation lines joined, a here-document kept with the command
    that opens it, comments and blank lines dropped."""
    commands: list[str] = []
    lines = iter(block.splitlines())
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        command = line
        while command.endswith("\\"):
            command = command[:-1] + " " + next(lines).strip()
        heredoc = re.search(r"<<'(\w+)'", command)
        if heredoc:
            body = []
            for inner in lines:
                body.append(inner)
                if inner == heredoc.group(1):
                    break
            command += "\n" + "\n".join(body)
        commands.append(command)
    return commands
