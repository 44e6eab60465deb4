"""includes.py CHECK - the #include "..." lines of cli/, runtime/, io/ and ptx/
against the layering of docs/architecture.md; prints one line per finding,
nothing when the tree keeps the rule.

CHECK is one of:
  resolve  every include names a file: a bare name of the including file's
           folder, or a path from the top of the tree to another folder's
  layers   a file includes nothing of a layer above its own (cli, runtime,
           io, ptx, top down); ptx/ includes nothing outside ptx/
  cycles   no two modules (NAME.c and NAME.h together, with NAME_state.h, the
           module's fields for its own layer alone) include each other,
           directly or around a loop
"""
import os
import re
import sys

LAYERS = ['cli', 'runtime', 'io', 'ptx']


def sources(top):
    """Every C, CUDA and header file of the four layers, as paths from top."""
    out = []
    for layer in LAYERS:
        for folder, _, names in os.walk(os.path.join(top, layer)):
            for name in names:
                if name.endswith(('.c', '.h', '.cu')):
                    out.append(os.path.relpath(os.path.join(folder, name), top))
    return sorted(out)


def includes(top, path):
    """The quoted includes of one file, as (line number, name)."""
    found = []
    with open(os.path.join(top, path), errors='replace') as f:
        for n, line in enumerate(f, 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if m:
                found.append((n, m.group(1)))
    return found


def target(top, path, name):
    """The file an include names, or None where it names none of the tree's."""
    folder = os.path.dirname(path)
    if '/' not in name:
        here = os.path.join(folder, name)
        return here if os.path.isfile(os.path.join(top, here)) else None
    if os.path.dirname(name) == folder:
        return None  # a header of the same folder goes by its bare name
    return name if os.path.isfile(os.path.join(top, name)) else None


def module_of(path):
    """The module a file belongs to: its name without the extension, and
    NAME_state.h (a module's private fields) to NAME."""
    name = os.path.splitext(path)[0]
    return name[:-len('_state')] if path.endswith('_state.h') else name


def layer(path):
    """The index of a file's layer in LAYERS (0: the top one)."""
    return LAYERS.index(path.split('/')[0])


def main():
    check, top = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else '.'
    files = sources(top)
    edges = {}
    for path in files:
        module = module_of(path)
        edges.setdefault(module, set())
        for n, name in includes(top, path):
            to = target(top, path, name)
            if to is None:
                if check == 'resolve' and not name.startswith('build/'):
                    print('%s:%d: "%s" names no file of its folder or path from the top' % (path, n, name))
                continue
            if check == 'layers' and to.split('/')[0] in LAYERS:
                if layer(to) < layer(path) or (path.startswith('ptx/') and not to.startswith('ptx/')):
                    print('%s:%d: includes %s, of a layer above' % (path, n, to))
            other = module_of(to)
            if other != module:
                edges[module].add(other)
    if check == 'cycles':
        for loop in cycles(edges):
            print('include loop: ' + ' -> '.join(loop + [loop[0]]))


def cycles(edges):
    """One loop through each set of modules that reach each other (Tarjan's
    strongly connected components, then a path around the component)."""
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
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
                comps.append(set(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    loops = []
    for comp in comps:
        start = min(comp)
        path, seen, v = [start], {start}, start
        while True:  # every member reaches another member: walk until a repeat
            v = min(w for w in edges[v] if w in comp)
            if v in seen:
                loops.append(path[path.index(v):])
                break
            seen.add(v)
            path.append(v)
    return loops


if __name__ == '__main__':
    main()
