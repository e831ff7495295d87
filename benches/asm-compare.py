#!/usr/bin/env python3
"""Compare the release machine code of the same functions in two builds (objdump, nm).

usage: benches/asm-compare.py [--offsets] [--diff] OLD_BINARY NEW_BINARY NAME...
NAME is matched against the last segments of each demangled function name (e.g.
'SymmetricArray::put', 'rma_ucx'); every instance in each binary is disassembled, normalized
(code addresses, rip-relative offsets, module paths and hashes of symbols) and compared as a
multiset. With --offsets, field offsets (displacements and immediates) are normalized too, so
two builds whose structs lay their fields out differently compare equal when the instructions
are the same. --diff prints a unified diff of the instances that differ. Exits 1 when a name
differs or is missing on a side. Used by benches/compare-revs.sh.
"""
import re, subprocess, sys, difflib

def symbols(binary):
    """(address, size, demangled name) of every function defined in `binary`."""
    out = subprocess.run(['nm', '-C', '-S', '--defined-only', binary], capture_output=True, text=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split(' ', 3)
        if len(parts) == 4 and parts[2] in 'tTwW':
            syms.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
    return syms

def last(name, k):
    """The last `k` path segments of a demangled name, without generic arguments or impls."""
    name = re.sub(r'<impl [^>]*>::', '', name)
    depth, flat = 0, ''
    for c in name:
        if c == '<': depth += 1
        elif c == '>': depth -= 1
        elif depth == 0: flat += c
    segs = [s for s in flat.split('::') if s and not s.startswith('{')]
    return '::'.join(segs[-k:])

def disasm(binary, start, size, offsets):
    """The normalized instructions of the function at `start`."""
    out = subprocess.run(['objdump', '-d', '-C', '--no-show-raw-insn', f'--start-address={start}',
                          f'--stop-address={start + size}', binary], capture_output=True, text=True).stdout
    insns = []
    for line in out.splitlines():
        m = re.match(r'\s*[0-9a-f]+:\s+(.*)', line)
        if not m:
            continue
        ins = m.group(1)
        def sym(text):
            name, _, off = text.partition('+0x')
            name = re.sub(r'anon\.[0-9a-f]+\.[0-9]+\.llvm\.[0-9]+', 'anon', name)
            return '<' + last(name, 1) + ('+OFF' if off else '') + '>'
        ins = re.sub(r'#.*<(.*)>$', lambda g: '# ' + sym(g.group(1)), ins)
        ins = re.sub(r'\b[0-9a-f]{4,}\s+<(.*)>$', lambda g: sym(g.group(1)), ins)
        ins = re.sub(r'-?0x[0-9a-f]{5,}\(%rip\)', 'X(%rip)', ins)
        if offsets:
            ins = re.sub(r'-?0x[0-9a-f]+\(', 'D(', ins)
            ins = re.sub(r'\$-?0x[0-9a-f]+', '$I', ins)
        insns.append(ins.strip())
    return insns

def main():
    args = sys.argv[1:]
    offsets = '--offsets' in args
    show = '--diff' in args
    args = [a for a in args if not a.startswith('--')]
    old, new, names = args[0], args[1], args[2:]
    so, sn = symbols(old), symbols(new)
    same_all = True
    for name in names:
        k = name.count('::') + 1
        fo = sorted(disasm(old, a, s, offsets) for a, s, n in so if last(n, k) == name)
        fn = sorted(disasm(new, a, s, offsets) for a, s, n in sn if last(n, k) == name)
        same = fo == fn and len(fo) > 0
        same_all &= same
        print(f'{name:28} old {len(fo)} x {[len(f) for f in fo]} insns, new {len(fn)} x '
              f'{[len(f) for f in fn]} insns: {"identical" if same else "DIFFERENT"}')
        if show and not same:
            for a, b in zip(fo, fn):
                if a != b:
                    for l in difflib.unified_diff(a, b, lineterm='', n=1):
                        print('    ' + l)
    sys.exit(0 if same_all else 1)

main()
