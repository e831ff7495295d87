#!/usr/bin/env bash
# The README's headline table: today's figures of a few cases, ours against Open MPI's OpenSHMEM
# (oshmem), taken from the result files the benchmark scripts write (benches/results/*.md), never
# typed by hand. Writes
#   RESULTS_DIR/headline.md   the table, begun by a comment naming this script, the date and the
#                             result files (with their scripts, dates and machines) it came from;
#   README.md                 the same table between the lines <!-- headline:begin --> and
#                             <!-- headline:end -->, with links to the result files; only when
#                             RESULTS_DIR is benches/results/ (the committed results) or README
#                             names a file.
# A row whose result file has no such row yet (a placeholder, a file of a script not run yet) is
# left out, with a note on stderr. benches/run.sh runs this at its end.
#
# Usage: bash benches/headline.sh
#        RESULTS_DIR=/tmp/r bash benches/headline.sh           (headline.md from /tmp/r's files)
#        README=/tmp/README.md bash benches/headline.sh        (update that file instead)
# Knobs (environment): RESULTS_DIR (default benches/results/; TINY=1: target/bench-results/),
# README (the file with the markers; default README.md when RESULTS_DIR is benches/results/).
# Exits non-zero when no row could be made, or README lacks the markers.
set -euo pipefail
# shellcheck source=benches/results-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/results-lib.sh"
results_init
readme=${README:-}
if [[ -n $readme ]]; then
    readme=$(realpath -m -- "$readme")
elif [[ $RESULTS_DIR == "$results_root/benches/results" ]]; then
    readme=$results_root/README.md
fi
cd "$results_root"

python3 - "$RESULTS_DIR" "$readme" "$(date -u +%F)" <<'EOF'
import os
import re
import sys
import textwrap

results, readme, today = sys.argv[1], sys.argv[2], sys.argv[3]


def warn(msg):
    print(f"headline.sh: {msg}", file=sys.stderr)


def tables(name):
    """The Markdown tables of a result file: lists of {column: cell} rows, or None."""
    try:
        text = open(os.path.join(results, name), encoding="utf-8").read()
    except FileNotFoundError:
        return None
    out, cur = [], None
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cur is None:
                cur = {"head": cells, "rows": []}
                out.append(cur)
            elif all(re.fullmatch(r":?-+:?", c) for c in cells if c):
                continue
            else:
                cur["rows"].append(dict(zip(cur["head"], cells)))
        else:
            cur = None
    return out


def origin(name):
    """'SCRIPT on DATE (MACHINE)' from a result file's header comment, or None."""
    try:
        head = open(os.path.join(results, name), encoding="utf-8").read(2000)
    except FileNotFoundError:
        return None
    m = re.search(r"Written by (.+?) on (\d{4}-\d{2}-\d{2})", head.replace("\n     ", " "))
    if not m:
        return None
    machine = re.search(r"Machine: ([^\n]*?)\.?\n", head)
    return f"{m.group(1)} on {m.group(2)}" + (f" ({machine.group(1)})" if machine else "")


def num(cell):
    try:
        return float(cell.replace(",", ""))
    except (AttributeError, ValueError):
        return None


def ns(x):
    """A time in ns, in the unit that suits it."""
    if x < 1e3:
        return f"{x:.1f} ns"
    if x < 1e4:
        return f"{x / 1e3:.2f} µs"
    if x < 1e6:
        return f"{x / 1e3:.1f} µs"
    return f"{x / 1e6:,.1f} ms"


def ratio(cell, a, b):
    """The source's ratio when it has one, else a / b."""
    if num(cell) is not None:
        return cell
    return f"{a / b:.3f}" if b else None


def latency_row(case, size, variant, ours="ours direct", osh="oshmem", rat="direct/oshmem"):
    def find():
        for t in tables("latency.md") or []:
            for r in t["rows"]:
                if (r.get("case"), r.get("size"), r.get("variant")) == (case, size, variant):
                    a, b = num(r.get(ours)), num(r.get(osh))
                    if a is None or b is None:
                        return None
                    return ns(a), ns(b), ratio(r.get(rat, ""), a, b)
        return None
    return find


def collective_row(case):
    """The collective at the largest PE count of collectives.md that has both figures."""
    def find():
        for t in tables("collectives.md") or []:
            counts = sorted((int(h.split()[1]) for h in t["head"]
                             if re.fullmatch(r"ours \d+", h)), reverse=True)
            for r in t["rows"]:
                if r.get("case") != case:
                    continue
                for n in counts:
                    a, b = num(r.get(f"ours {n}")), num(r.get(f"oshmem {n}"))
                    if a is not None and b is not None:
                        return n, (ns(a), ns(b), ratio(r.get(f"ratio {n}", ""), a, b))
        return None
    return find


def init_row():
    """shmem_init on PE 0 at the largest PE count of scaling.md where both variants have it."""
    def find():
        best = None
        for t in tables("scaling.md") or []:
            if "init ms" not in t["head"]:
                continue
            init = {}
            for r in t["rows"]:
                if not re.fullmatch(r"\d+", r.get("PEs", "")):
                    continue
                init[(int(r["PEs"]), r.get("variant"))] = num(r.get("init ms"))
            for n in sorted({k[0] for k in init}, reverse=True):
                a, b = init.get((n, "ours")), init.get((n, "oshmem"))
                if a is not None and b is not None:
                    best = (n, (f"{a:,.0f} ms", f"{b:,.0f} ms", f"{a / b:.3f}" if b else None))
                    break
            if best:
                break
        return best
    return find


rows = [
    ("put 8 B + quiet", "latency.md", latency_row("put + quiet", "8 B", "aligned")),
    ("get 8 B", "latency.md", latency_row("get", "8 B", "aligned")),
    ("fetch_add 8 B", "latency.md", latency_row("fetch_add", "8 B", "heap")),
    ("put 8 B + quiet to a static (oshmem: its data segment)", "latency.md",
     latency_row("put + quiet", "8 B", "static")),
    ("put 1 MiB + quiet", "latency.md", latency_row("put + quiet", "1 MiB", "aligned")),
    ("barrier_all", "latency.md", latency_row("barrier_all", "0 B", "heap")),
    ("sum_reduce of 1 long, {n} PEs", "collectives.md", collective_row("sum_reduce 1 long")),
    ("put 8 B + quiet over tcp (UCX_TLS=tcp,self on both)", "latency.md",
     latency_row("put + quiet", "8 B", "aligned", "ours UCX", "oshmem tcp", "UCX/oshmem tcp")),
    ("get 8 B over tcp (UCX_TLS=tcp,self on both)", "latency.md",
     latency_row("get", "8 B", "aligned", "ours UCX", "oshmem tcp", "UCX/oshmem tcp")),
    ("shmem_init, {n} PEs on one node", "scaling.md", init_row()),
]

made = []
for label, source, find in rows:
    got = find()
    if got is None:
        warn(f"left out '{label.format(n='N')}': no such row in {os.path.join(results, source)}")
        continue
    if isinstance(got[0], int):
        label, got = label.format(n=got[0]), got[1]
    ours, osh, rat = got
    made.append((label, ours, osh, rat or "n/a", source))
if not made:
    warn(f"no row could be made from the result files in {results}")
    sys.exit(1)

sources = []
for s in sorted({m[4] for m in made}):
    sources.append((s, origin(s) or "origin not recorded"))


def table(link):
    out = ["| case (2 PEs on one node unless said) | ours | oshmem | ours / oshmem | from |",
           "|---|---:|---:|---:|---|"]
    for label, ours, osh, rat, src in made:
        cell = f"[{src}](benches/results/{src})" if link else f"`{src}`"
        out.append(f"| {label} | {ours} | {osh} | {rat} | {cell} |")
    return out


note = ("ours / oshmem below 1: ours is the faster. For latency and collectives the ratio is the "
        "median of the per-round ratios of the two running back to back, as the result file "
        "gives it, so it can differ from the quotient of the two medians shown.")

md = [f"<!-- Written by benches/headline.sh on {today} from the result files beside it:"]
for s, o in sources:
    md += textwrap.wrap(f"{s}: {o}.", 95, initial_indent="     ", subsequent_indent="       ")
md.append("     A rerun of benches/headline.sh (benches/run.sh runs it) replaces this file: do not")
md.append("     edit it by hand. -->")
md += ["", "Today's headline figures, ours against Open MPI's OpenSHMEM 4.1.4, from the result "
       "files of the sections below.", ""]
md += table(False) + ["", note]
path = os.path.join(results, "headline.md")
tmp = path + ".tmp"
with open(tmp, "w", encoding="utf-8") as f:
    f.write("\n".join(md) + "\n")
os.replace(tmp, path)
warn(f"wrote {path}")

if readme:
    try:
        text = open(readme, encoding="utf-8").read()
    except FileNotFoundError:
        warn(f"{readme} not found")
        sys.exit(1)
    begin, end = "<!-- headline:begin -->", "<!-- headline:end -->"
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        warn(f"{readme} has no single '{begin}' ... '{end}' pair: not updated")
        sys.exit(1)
    runs = "; ".join(dict.fromkeys(o for _, o in sources))
    block = [begin,
             "<!-- Written by benches/headline.sh from benches/results/: do not edit by hand. -->",
             ""] + table(True) + [
             "", f"{note} Measured by {runs}. All results, how they are measured and how to run "
             "them again: [the guide's performance chapter](docs/src/performance.md).", "", end]
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    tmp = readme + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(head + "\n".join(block) + tail)
    os.replace(tmp, readme)
    warn(f"updated the headline table in {readme}")
EOF
