#!/usr/bin/python3
"""Prints the plan of user/'s modules: which module includes which
(a module is a .c and its .h: user/format/format.{c,h} is format/format),
folder by folder, and the circles in it: among modules, among the
folders of the pipeline (user/'s own top level, main.c and the small
shared modules, is left out: everything may use it and it uses all),
and among files, and any folder that reaches up the pipeline's stages
(STAGES).  --check: exit 1 if there is a circle or a reach up (make test
runs it so that none comes back).

Files: a.c uses b.c when it names a function b.c defines (not static).
Modules hide such circles when files share one header (a folder's
private header, session/session.h): follow.c and reports.c both include
session.h, and each calling the other is a circle all the same.  Names
are read from the source with comments and strings left out; a name two
files define is reported, as a defect of its own (the linker refuses
it; a plan cannot tell which one a call means).

A module includes another when its .c or .h has #include "other.h";
headers resolve by name, as the Makefile's -I for every folder of user/
does.  A private header with no .c of its own (probes/probesimpl.h)
belongs to the module of its folder whose name begins its own, or
stands alone (session/session.h)."""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Comments, string and character literals: blanked before names are read.
NOISE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|'
                   r"'(?:\\.|[^'\\\n])*'", re.S)
NAME = re.compile(r'\b[A-Za-z_]\w*\b')
# A function's definition: at the start of a line, not static, a name, its
# parameters and the body's brace (K&R's brace on a line of its own too).
DEFINITION = re.compile(r'^(?!static\b|typedef\b|extern\b|#)[A-Za-z_]'
                        r'[^;{}()#]*?\b([A-Za-z_]\w*)\s*\([^;{}]*\)\s*\{',
                        re.M | re.S)


def modules(root):
    """{module: [files]} and {header basename: module}."""
    mods, headers = {}, {}
    for folder, _, files in os.walk(root):
        for f in sorted(files):
            stem, ext = os.path.splitext(f)
            if ext not in (".c", ".h"):
                continue
            rel = os.path.relpath(os.path.join(folder, stem), root)
            mods.setdefault(rel, []).append(os.path.join(folder, f))
            if ext == ".h":
                headers[f] = rel
    # A private header (no .c of its own) named after a module of its
    # folder is that module's: probes/probesimpl.h is probes/probes's.
    for rel in [m for m, files in mods.items()
                if all(f.endswith(".h") for f in files)]:
        owners = [m for m in mods if m != rel and
                  os.path.dirname(m) == os.path.dirname(rel) and
                  os.path.basename(rel).startswith(os.path.basename(m)) and
                  any(f.endswith(".c") for f in mods[m])]
        if owners:
            owner = max(owners, key=len)
            mods[owner] += mods.pop(rel)
            for h, m in headers.items():
                if m == rel:
                    headers[h] = owner
    return mods, headers


def edges(mods, headers):
    """{module: set of modules it includes}."""
    out = {}
    for mod, files in mods.items():
        deps = set()
        for path in files:
            with open(path, encoding="utf-8", errors="replace") as fh:
                for name in INCLUDE.findall(fh.read()):
                    dep = headers.get(os.path.basename(name))
                    if dep and dep != mod:
                        deps.add(dep)
        out[mod] = deps
    return out


def file_uses(root):
    """{file.c: {file.c whose functions it calls: [names]}}, and the names
    more than one file defines."""
    defined, names = {}, {}
    for folder, _, files in os.walk(root):
        for f in sorted(files):
            if not f.endswith(".c"):
                continue
            path = os.path.relpath(os.path.join(folder, f), root)
            with open(os.path.join(folder, f), encoding="utf-8",
                      errors="replace") as fh:
                text = NOISE.sub(" ", fh.read())
            for m in DEFINITION.finditer(text):
                defined.setdefault(m.group(1), []).append(path)
            names[path] = set(NAME.findall(text))
    twice = {n: sorted(paths) for n, paths in defined.items()
             if len(paths) > 1}
    uses = {}
    for path, used in names.items():
        out = {}
        for n in sorted(used):
            where = defined.get(n, ())
            if len(where) == 1 and where[0] != path:
                out.setdefault(where[0], []).append(n)
        uses[path] = out
    return uses, twice


def circles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def folder(mod):
    return os.path.dirname(mod) or "."


# The pipeline's stages, lowest first (docs/design.md draws them): a
# folder includes only folders before it.  A circle among folders is one
# kind of reaching up; this order also catches an arrow that makes no
# circle yet (report/ using session/), before the arrow back comes.  A
# new folder takes its place here, or --check refuses it.
STAGES = ["text", "files", "order", "waits", "target", "states",
          "debuginfo", "symbols", "unwind", "libc", "probes", "calibrate",
          "whatif", "report",
          "findings", "format", "live", "record", "serve", "session"]


def reaching_up(pipeline, graph):
    """Lines naming each folder outside STAGES and each arrow to a stage
    at or above its own (by user/'s top-level folder)."""
    out = []
    rank = {f: i for i, f in enumerate(STAGES)}
    top = {f: f.split("/")[0] for f in pipeline}
    for f in sorted(pipeline):
        if top[f] not in rank:
            out.append(f"folder {f}/ has no stage (includeplan.py STAGES)")
            continue
        for d in sorted(pipeline[f]):
            td = d.split("/")[0]
            if td == top[f] or td not in rank or rank[td] < rank[top[f]]:
                continue
            mods = sorted(m for m in graph if folder(m) == f and
                          any(folder(x) == d for x in graph[m]))
            out.append(f"reaches up: {f} -> {d} ({', '.join(mods)})")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", nargs="?", default="user")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when the plan has a circle")
    ap.add_argument("--quiet", action="store_true",
                    help="print only the circles")
    args = ap.parse_args()
    mods, headers = modules(args.root)
    graph = edges(mods, headers)
    fgraph = {}
    for mod, deps in graph.items():
        for d in deps:
            if folder(d) != folder(mod):
                fgraph.setdefault(folder(mod), set()).add(folder(d))
    if not args.quiet:
        for fold in sorted({folder(m) for m in graph}):
            print(f"{fold}/")
            for mod in sorted(m for m in graph if folder(m) == fold):
                deps = sorted(graph[mod])
                print(f"  {os.path.basename(mod)} -> "
                      f"{', '.join(deps) if deps else '(nothing)'}")
        print("folders:")
        for fold in sorted(fgraph):
            print(f"  {fold} -> {', '.join(sorted(fgraph[fold]))}")
    found = circles(graph)
    for comp in found:
        members = set(comp)
        inner = [f"{m} -> {d}" for m in comp for d in sorted(graph[m])
                 if d in members]
        print(f"circle: {' '.join(comp)}: {'; '.join(inner)}")
    if not found:
        print("no circles among the "
              f"{len(graph)} modules of {args.root}/")
    pipeline = {f: {d for d in deps if d != "."}
                for f, deps in fgraph.items() if f != "."}
    found_folders = circles(pipeline)
    for comp in found_folders:
        members = set(comp)
        inner = [f"{f} -> {d} ({', '.join(sorted(m for m in graph if folder(m) == f and any(folder(x) == d for x in graph[m])))})"
                 for f in comp for d in sorted(pipeline[f]) if d in members]
        print(f"folder circle: {' '.join(comp)}: {'; '.join(inner)}")
    if not found_folders:
        print(f"no circles among the {len(pipeline)} folders of {args.root}/")
    up = reaching_up(pipeline, graph)
    for line in up:
        print(line)
    if not up:
        print(f"no folder reaches up the {len(STAGES)} stages")
    uses, twice = file_uses(args.root)
    for n, paths in sorted(twice.items()):
        print(f"defined twice: {n}: {', '.join(paths)}")
    found_files = circles({f: set(u) for f, u in uses.items()})
    for comp in found_files:
        members = set(comp)
        inner = [f"{f} -> {d} ({', '.join(uses[f][d])})"
                 for f in comp for d in sorted(uses[f]) if d in members]
        print(f"file circle: {' '.join(comp)}: {'; '.join(inner)}")
    if not found_files:
        print(f"no circles among the {len(uses)} files of {args.root}/")
    bad = found or found_folders or found_files or twice or up
    return 1 if bad and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
