#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""check-structure: files call downward only, and stay small.

usage: check-structure.py [--max-lines N] [--layers] [--doc FILE] DIR...

Each DIR is one program (lib/ and kmod/ link separately, and may reuse a
name), read as the graph of its .c files: file A depends on file B when
A's code names a function or variable that B defines with external
linkage (a call, or a function's address put in an ops table: either
way A needs B). It fails, printing each circle with the names that make
its steps, when the graph has one: A needs B and B needs A, directly or
through other files. A part that must reach back into the file above it
takes what it needs as an argument or through a small ops struct the
file above fills in, which this graph does not see as a dependency,
since the part no longer names anything there.

It also fails on any .c file over --max-lines (default 600) lines: one
concept a file. With --layers it also prints each DIR's files by layer,
the longest chain of dependencies below each (0: a file that needs no
other), top first: the picture of docs/design.md's code map. With --doc
it fails unless FILE's lines of that form ("lib/ 3: a.c b.c") are
exactly these, so the picture cannot fall behind the code.

The definitions come from universal-ctags (external linkage only: its
file-scoped tags, the statics, are left out). The names a file uses come
from its own text with comments, strings, character constants and
struct/union/enum tags removed, plus, for each macro or inline function
of a header in DIR that it uses, the names in that helper's body (and so
on through helpers they use): a call through a header's helper is the
file's own call. A name a file defines itself is not a dependency.
Source text rather than objects, so the module's files are read without
building the module.
"""
import argparse
import json
import os
import re
import subprocess
import sys

TOKEN = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
# Comments, then string and character literals (with escapes); the rest
# passes through. One pass, so a quote inside a comment or a comment
# opener inside a string is no trouble.
LEXEME = re.compile(r'''/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*\'''',
                    re.S)


def ctags(kinds, extras, files):
    """universal-ctags' tags of @files (C, whatever the suffix)."""
    if not files:
        return []
    out = subprocess.run(['ctags', '--output-format=json', '--language-force=C',
                          '--kinds-C=' + kinds, '--fields=+ne', '--extras=' + extras,
                          '-f', '-'] + files,
                         check=True, capture_output=True, text=True).stdout
    return [t for t in map(json.loads, out.splitlines()) if t.get('_type') == 'tag']


def external_definitions(files):
    """Map each name with external linkage to the files that define it."""
    defs = {}
    for tag in ctags('fv', '-F', files):
        defs.setdefault(tag['name'], set()).add(tag['path'])
    return defs


def code_text(path):
    """The file's text less comments, literals, #include lines and
    struct/union/enum tags (a type, even where a function has the same
    name: struct gpuar_port_stats and gpuar_port_stats()), with its lines
    where they were."""
    with open(path, encoding='utf-8') as f:
        text = LEXEME.sub(lambda m: re.sub(r'[^\n]', ' ', m.group()), f.read())
    text = re.sub(r'^[ \t]*#[ \t]*include[^\n]*', ' ', text, flags=re.M)
    return re.sub(r'\b(?:struct|union|enum)\s+[A-Za-z_][A-Za-z0-9_]*', ' ', text)


def header_helpers(headers):
    """Map each macro and inline function of @headers to the names in its
    body."""
    helpers = {}
    lines = {h: code_text(h).split('\n') for h in headers}
    for tag in ctags('fd', '+F', headers):
        body = lines[tag['path']][tag['line'] - 1:tag.get('end', tag['line'])]
        helpers[tag['name']] = set(TOKEN.findall('\n'.join(body))) - {tag['name']}
    return helpers


def names_used(path, helpers):
    names = set(TOKEN.findall(code_text(path)))
    todo = [n for n in names if n in helpers]
    while todo:
        for n in helpers[todo.pop()] - names:
            names.add(n)
            if n in helpers:
                todo.append(n)
    return names


def strongly_connected(graph):
    """Tarjan's algorithm, iterative: the node sets of the graph's SCCs."""
    index, low, on_stack, stack, sccs = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                scc = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    scc.add(member)
                    if member == node:
                        break
                sccs.append(scc)
    return sccs


def shortest_circle(graph, scc):
    """A shortest cycle through the SCC's first file (breadth-first)."""
    start = min(scc)
    parent = {start: None}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph[node]):
            if nxt == start:
                path = [node]
                while parent[path[-1]] is not None:
                    path.append(parent[path[-1]])
                return list(reversed(path)) + [start]
            if nxt in scc and nxt not in parent:
                parent[nxt] = node
                queue.append(nxt)
    return [start]


def layer_lines(directory, graph):
    """Each file's layer: 1 + the highest layer of the files it needs."""
    layer = {}

    def of(path):
        if path not in layer:
            layer[path] = 1 + max((of(p) for p in graph[path]), default=-1)
        return layer[path]

    for path in graph:
        of(path)
    return [f'{directory.rstrip("/")}/ {n}: '
            + ' '.join(sorted(os.path.basename(p) for p in graph if layer[p] == n))
            for n in range(max(layer.values(), default=-1), -1, -1)]


def check_program(directory, max_lines):
    files = sorted(os.path.join(directory, f) for f in os.listdir(directory)
                   if f.endswith('.c'))
    failures = 0
    for path in files:
        with open(path, encoding='utf-8') as f:
            n = sum(1 for _ in f)
        if n > max_lines:
            print(f'# {path}: {n} lines, over {max_lines}')
            failures += 1

    defs = external_definitions(files)
    helpers = header_helpers(sorted(os.path.join(directory, f)
                                    for f in os.listdir(directory)
                                    if f.endswith('.h')))
    graph = {path: set() for path in files}
    why = {}
    for path in files:
        for name in names_used(path, helpers):
            owners = defs.get(name, set())
            if path in owners:
                continue
            for owner in owners:
                graph[path].add(owner)
                why.setdefault((path, owner), set()).add(name)

    circles = [scc for scc in strongly_connected(graph) if len(scc) > 1]
    for scc in sorted(circles, key=min):
        failures += 1
        circle = shortest_circle(graph, scc)
        print('# circle: ' + ' -> '.join(os.path.basename(p) for p in circle)
              + f' ({len(scc)} files call each other: '
              + ', '.join(sorted(os.path.basename(p) for p in scc)) + ')')
        for a in sorted(scc):
            for b in sorted(graph[a] & scc):
                print(f'#   {os.path.basename(a)} -> {os.path.basename(b)}: '
                      + ', '.join(sorted(why[(a, b)])))
    edges = sum(len(v) for v in graph.values())
    return failures, len(files), edges, [] if circles else layer_lines(directory, graph)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--max-lines', type=int, default=600)
    parser.add_argument('--layers', action='store_true')
    parser.add_argument('--doc')
    parser.add_argument('dirs', nargs='+')
    args = parser.parse_args()
    bad = []
    summary = []
    layers = []
    for d in args.dirs:
        failures, nfiles, edges, lines = check_program(d, args.max_lines)
        summary.append(f'{d.rstrip("/")}/ {nfiles} files, {edges} dependencies')
        layers += lines
        if failures:
            bad.append(d.rstrip('/') + '/')
    if args.layers:
        print('\n'.join(layers))
    if args.doc and not bad:
        prefixes = tuple(d.rstrip('/') + '/ ' for d in args.dirs)
        with open(args.doc, encoding='utf-8') as f:
            drawn = [l.rstrip('\n') for l in f
                     if l.startswith(prefixes) and re.match(r'\S+/ [0-9]+: ', l)]
        if drawn != layers:
            print(f'# {args.doc} draws the layers as:', *drawn, sep='\n#   ')
            print('# they are (tools/check-structure.py --layers):', *layers, sep='\n#   ')
            print(f'not ok - check-structure: {args.doc} draws other layers than the code has')
            return 1
    if bad:
        print('not ok - check-structure: circles between files or files over '
              f'{args.max_lines} lines in ' + ', '.join(bad))
        return 1
    print('ok - check-structure: no circle between files, none over '
          f'{args.max_lines} lines (' + '; '.join(summary) + ')')
    return 0


if __name__ == '__main__':
    sys.exit(main())
