#!/usr/bin/env bash
# What a newcomer does: a clean clone, the README's first quickstart command verbatim (install
# and run the demo), then the installed command from another directory. Exits non-zero when any
# step fails or the demo's report is missing. Usage: scripts/check_newcomer.sh [REPO]
set -euo pipefail
repo="$(cd "${1:-$(dirname "$0")/..}" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

git clone -q "$repo" "$work/clone"
command=$(python3 - "$work/clone/README.md" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
section = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
lines = [l for b in re.findall(r"```bash\n(.*?)```", section, flags=re.S)
         for l in b.splitlines() if l and not l.startswith("#")]
print(lines[0])
PY
)
echo "newcomer: $command"
(cd "$work/clone" && bash -c "$command")
test -f "$work/clone/evalplat-demo/reports/index.html"

mkdir "$work/elsewhere"
(cd "$work/elsewhere" && "$work/clone/.venv/bin/evalplat" demo --dir here >/dev/null 2>&1)
test -f "$work/elsewhere/here/reports/index.html"
echo "newcomer: demo report built from a clean clone and from another directory"
