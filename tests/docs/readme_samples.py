#!/usr/bin/python3
"""README.md's generated blocks, and what they look like.

Each block sits between `<!-- sample: NAME -->` and `<!-- /sample -->`.
A run sample is a fenced block whose first line is `$ COMMAND`: this
script runs COMMAND for real (`make demo` as it is; a `./syncprof` line
against the bundled demo program, its PID for `$PID`, from a scratch
directory) and writes the sections of its output that NAME keeps.  The
`packages` block is the Makefile's package lists.  Run as root:
`make readme-samples`.  tests/integration/test_readme.py imports the
parsing and the shapes from here, so the README, this script and the
test read one format."""
import argparse
import os
import re
import select
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(ROOT, "README.md")

BEGIN = re.compile(r"^<!-- sample: (\S+) -->$")
END = "<!-- /sample -->"
QUICK_BEGIN, QUICK_END = "<!-- quickstart -->", "<!-- /quickstart -->"

# The sections of a run's output each sample keeps, by the start of their
# first line ("syncprof: pid" is the report's table); the others are "...".
KEEP = {
    "demo": ["./syncprof "],
    "stacks": ["syncprof: pid"],
    "blame": ["Who made them wait"],
    "why": ["Why they waited", "Where the chains end:"],
}
# Columns a table has only when a row has something for them (futile
# wakeups: a run may see none): a header's shape leaves them out.
OPTIONAL_COLUMNS = ("Futile",)
# Titles that go on to name what a run happened to see: their shape is
# the start.
VARYING = ("Where the chains end:",)

# Package groups: (Makefile variable, what installs it); each group lists
# the packages its variable adds to the one before.
GROUPS = [("DEB_BUILD_PKGS", "build, demo", "`make demo` (`make deps-build`)"),
          ("DEB_PKGS", "tests", "`make test` (`make deps`)"),
          ("DEB_PKGS BENCH=1", "benchmarks", "`make bench`")]

TYPES = ("mutex", "rec_mutex", "condvar", "rwlock-r", "rwlock-w", "sem",
         "libc-lock", "futex", "barrier", "spinlock", "join", "poll", "io",
         "sleep")
ROW = re.compile(r"^(%s)\s+(\S+|\[\s*\d+\])\s+\S.*\s\d+\.\d{5}\s+\d+(\s|$)"
                 % "|".join(re.escape(t) for t in TYPES))
SUMMARY = re.compile(r"^syncprof: pid \d+ \(\S+\)\s+mode (contended|full)\s+elapsed [\d.]+ s")
HEADER = re.compile(r"^Type\s+Object\s+")
RULE = re.compile(r"^-{20,}$")
STACK = re.compile(r"^    --\d+\.\d+%-- \d+ waits? ")
FRAME = re.compile(r"^ {12}\S.*\(\S+:\d+\)|^ {12}\S+ \(\S+\)")


def kind(line):
    """What a line of a sample is: summary, header, rule, row, stack,
    frame, elided ('...'), or text (a section's title)."""
    for name, pattern in (("summary", SUMMARY), ("header", HEADER),
                          ("rule", RULE), ("row", ROW), ("stack", STACK),
                          ("frame", FRAME)):
        if pattern.match(line):
            return name
    return "elided" if line == "..." else "text"


def shape(lines):
    """The shape two outputs must share: each section's title (digits as
    N), column headers (spacing collapsed), and the kinds of the other
    lines."""
    out = set()
    for part in sections("\n".join(l for l in lines if l != "...")):
        for i, line in enumerate(part):
            k = kind(line)
            if k == "text" and i == 0:
                title = re.sub(r"\d+", "N", " ".join(line.split()))
                out.add(("title", next((v for v in VARYING
                                        if title.startswith(v)), title)))
            elif k == "header":
                out.add((k, " ".join(w for w in line.split()
                                     if w not in OPTIONAL_COLUMNS)))
            else:
                out.add((k, ""))
    return out


def blocks(text):
    """The README's generated blocks: {name: (first line index, last
    line index, the lines between the markers)}."""
    lines, found, open_at = text.split("\n"), {}, None
    for i, line in enumerate(lines):
        m = BEGIN.match(line)
        if m:
            open_at, name = i, m.group(1)
        elif line == END and open_at is not None:
            found[name] = (open_at, i, lines[open_at + 1:i])
            open_at = None
    return found


def fenced(body):
    """The lines inside a block's one fenced code block."""
    if len(body) < 2 or body[0] != "```" or body[-1] != "```":
        raise ValueError("a sample is one fenced block: ``` ... ```")
    return body[1:-1]


def quickstart(text):
    """The quick start's command lines (comments cut, blank lines left out)."""
    inside, fence, out = False, False, []
    for line in text.split("\n"):
        if line == QUICK_BEGIN:
            inside = True
        elif line == QUICK_END:
            inside = False
        elif inside and line.startswith("```"):
            fence = not fence
        elif inside and fence:
            command = re.sub(r"\s+#.*$", "", line).strip()
            if command:
                out.append(command)
    return out


def sections(output):
    """Output split at blank lines."""
    parts, current = [], []
    for line in output.rstrip("\n").split("\n"):
        if line.strip():
            current.append(line)
        elif current:
            parts.append(current)
            current = []
    if current:
        parts.append(current)
    return parts


def excerpt(name, output):
    """The first section of each kind NAME keeps, in order, with '...'
    where others were left out."""
    out, skipped, wanted = [], False, list(KEEP[name])
    for part in sections(output):
        match = [k for k in wanted if part[0].startswith(k)]
        if match:
            wanted.remove(match[0])
            if skipped:
                out.append("...")
            elif out:
                out.append("")
            out += part
            skipped = False
        else:
            skipped = True
    if skipped:
        out.append("...")
    return out


def make_var(var):
    """A Makefile variable's value, as make computes it."""
    name, *args = var.split()
    proc = subprocess.run(
        ["make", "--no-print-directory", "-s", "-f", "Makefile", "-f", "-",
         *args, "print-readme-var"],
        input=f"print-readme-var:\n\t@echo $({name})\n", cwd=ROOT,
        capture_output=True, text=True, check=True)
    return proc.stdout.split()


def package_groups():
    """[(group, installed by, [packages])], each group without the
    packages of the ones before it."""
    seen, out = [], []
    for var, group, how in GROUPS:
        pkgs = [p for p in make_var(var) if p not in seen]
        seen += pkgs
        out.append((group, how, pkgs))
    return out


def packages_block():
    """A Markdown table, blank lines around it so that the markers stay
    outside it."""
    lines = ["", "| group | installed by | Debian packages |", "|---|---|---|"]
    for group, how, pkgs in package_groups():
        lines.append(f"| {group} | {how} | {' '.join(pkgs)} |")
    return lines + [""]


class Demo:
    """The bundled demo program, running until stopped: the process the
    samples' $PID stands for."""

    def __init__(self, build, timeout=240):
        self.proc = subprocess.Popen(
            [os.path.join(build, "tests", "targets", "demo"), "4"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # Its first line says it runs: "demo: 4 workers, pid N".
        ready = select.select([self.proc.stderr], [], [], timeout)[0]
        line = self.proc.stderr.readline() if ready else ""
        if not line.startswith("demo: "):
            self.stop()
            raise RuntimeError(f"demo said {line!r}")
        self.pid = self.proc.pid

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        self.proc.stderr.close()


def argv_of(command, pid, syncprof):
    """A quick-start line as an argv: $PID substituted, ./syncprof the
    build's."""
    argv = shlex.split(command.replace("$PID", str(pid)))
    if argv and argv[0] == "./syncprof":
        argv[0] = syncprof
    return argv


def run_make(target):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MAKE") and k != "MFLAGS"}
    proc = subprocess.run(["make", target], cwd=ROOT, env=env, text=True,
                          capture_output=True, timeout=600)
    if proc.returncode:
        raise RuntimeError(f"make {target}: {proc.stderr}")
    return "\n".join(line for line in proc.stdout.split("\n")
                     if not line.startswith(("make[", "make:")))


def regenerate(build):
    with open(README) as f:
        text = f.read()
    lines = text.split("\n")
    syncprof = os.path.join(ROOT, "syncprof")
    if os.path.exists(os.path.join(build, "syncprof")):
        syncprof = os.path.join(build, "syncprof")
    demo = Demo(build)
    try:
        found = blocks(text)
        # From the last block up, so earlier line numbers stay right.
        for name, (start, end, body) in sorted(found.items(),
                                               key=lambda kv: -kv[1][0]):
            if name == "packages":
                new = packages_block()
            else:
                command = fenced(body)[0]
                if not command.startswith("$ "):
                    raise ValueError(f"sample {name}: no '$ COMMAND' line")
                command = command[2:]
                if command.startswith("make "):
                    output = run_make(command.split()[1])
                else:
                    with tempfile.TemporaryDirectory() as tmp:
                        output = subprocess.run(
                            argv_of(command, demo.pid, syncprof), cwd=tmp,
                            capture_output=True, text=True, timeout=600,
                            check=True).stdout
                new = ["```", "$ " + command, *excerpt(name, output), "```"]
            lines[start + 1:end] = new
            print(f"readme: sample {name}: {len(new)} lines", file=sys.stderr)
    finally:
        demo.stop()
    with open(README, "w") as f:
        f.write("\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("readme_samples: needs root (syncprof attaches to the demo)")
    regenerate(os.path.abspath(args.build))


if __name__ == "__main__":
    main()
