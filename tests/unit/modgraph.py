#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""Who uses whom, by name: the module graph the README's Layout shows.

A module is a source file and the header of the same name (lfv_ep.c and
lfv_ep.h are one). Module A uses module B when A's text names a function,
global variable, type, enumerator or macro that B defines (a non-static
function or variable of a .c file; anything a header defines, static inline
functions included). Names are found with Universal Ctags; uses are the
identifiers of a file once comments and strings are stripped.

  modgraph.py [--max-scc N] [--edges] [--table] [--layers] [--includes] FILE...

Prints every cycle (strongly connected component of more than one module)
and, with --max-scc, exits 1 when one is larger than N. --layers prints
the modules by layer (a module's layer is one more than the highest of
those it uses; a cycle is one node). --includes does the same for the
files' #include "..." lines instead of names (files, not modules).
"""
import json
import os
import re
import subprocess
import sys
from collections import defaultdict

KINDS = "fvsugetd"
COMMENT_OR_STRING = re.compile(
    r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")


def module(path):
    return os.path.splitext(os.path.basename(path))[0]


def definitions(files):
    out = subprocess.run(
        ["ctags", "--output-format=json", "--fields=+Kf", "--extras=-q",
         "--c-kinds=" + KINDS, "--language-force=C", "-f", "-"] + files,
        check=True, capture_output=True, text=True).stdout
    defs = defaultdict(set)
    for line in out.splitlines():
        tag = json.loads(line)
        if tag.get("_type") != "tag":
            continue
        path = tag["path"]
        local = tag.get("file", False) or tag.get("scopeKind") == "function"
        if path.endswith(".c") and local:
            continue		# static: nobody else can name it
        if tag.get("kind") == "macro" and tag["name"].endswith("_H"):
            continue		# include guard
        defs[tag["name"]].add(module(path))
    return defs


def uses(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = COMMENT_OR_STRING.sub(" ", f.read())
    text = re.sub(r"^\s*#\s*include[^\n]*", " ", text, flags=re.M)
    return set(IDENT.findall(text))


def graph(files):
    defs = definitions(files)
    edges = defaultdict(lambda: defaultdict(set))
    for path in files:
        a = module(path)
        for name in uses(path):
            owners = defs.get(name, set())
            if a in owners:
                continue
            for b in owners:
                edges[a][b].add(name)
    return {module(p) for p in files}, edges


def include_graph(files):
    names = {os.path.basename(p): p for p in files}
    edges = defaultdict(lambda: defaultdict(set))
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as f:
            for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', f.read(),
                                  re.M):
                if inc in names and inc != os.path.basename(path):
                    edges[os.path.basename(path)][inc].add(inc)
    return set(names), edges


def layers(nodes, edges, comps):
    comp_of = {}
    for c in comps:
        for v in c:
            comp_of[v] = tuple(c)
    for v in nodes:
        comp_of.setdefault(v, (v,))
    level = {}

    def depth(c):
        if c in level:
            return level[c]
        level[c] = 0		# cycles are one node: no recursion back
        below = [comp_of[w] for v in c for w in edges.get(v, {})
                 if comp_of[w] != c]
        level[c] = 1 + max((depth(b) for b in below), default=-1)
        return level[c]

    for c in set(comp_of.values()):
        depth(c)
    by = defaultdict(list)
    for c, lv in level.items():
        by[lv].append("{" + " ".join(c) + "}" if len(c) > 1 else c[0])
    return [sorted(by[lv]) for lv in sorted(by)]


def sccs(nodes, edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, {})):
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
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main(argv):
    max_scc, show_edges, table, files = None, False, False, []
    show_layers, includes = False, False
    it = iter(argv)
    for arg in it:
        if arg == "--max-scc":
            max_scc = int(next(it))
        elif arg == "--edges":
            show_edges = True
        elif arg == "--table":
            table = True
        elif arg == "--layers":
            show_layers = True
        elif arg == "--includes":
            includes = True
        else:
            files.append(arg)
    nodes, edges = include_graph(files) if includes else graph(files)
    comps = [c for c in sccs(nodes, edges) if len(c) > 1]
    comps.sort(key=len, reverse=True)
    for c in comps:
        print("cycle of %d: %s" % (len(c), " ".join(c)))
        if show_edges:
            for a in c:
                for b in sorted(edges[a]):
                    if b in c:
                        print("  %s -> %s: %s" % (
                            a, b, " ".join(sorted(edges[a][b])[:6])))
    if table:
        for a in sorted(nodes):
            print("%s: %s" % (a, " ".join(sorted(edges.get(a, {})))))
    if show_layers:
        for i, row in enumerate(layers(nodes, edges, comps)):
            print("layer %d: %s" % (i, " ".join(row)))
    biggest = max((len(c) for c in comps), default=1)
    print("largest cycle: %d %s (of %d)" % (
        biggest, "files" if includes else "modules", len(nodes)))
    return 1 if max_scc is not None and biggest > max_scc else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
