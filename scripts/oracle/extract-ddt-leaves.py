#!/usr/bin/env python3
"""Extracts what ddt/flush_test.go needs from a run of ddt-leaves-job.sh.

extract-ddt-leaves.py OUT DEST writes DEST/keys.tsv (first checksum word of
every DDT entry, its class, the leaf it was read from) and DEST/ddt-blocks.txt
(the block lines of the DDT ZAP objects from zdb -ddddd: block id, level, DVA,
LSIZE/PSIZE, fill, birth).
"""
import re, struct, sys, os, gzip
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst, exist_ok=True)
mos = open(f'{src}/mos-ddddd.txt').read().split('\n')
cls = {}
for l in mos:
    m = re.match(r'\s+DDT-sha256-zap-(unique|duplicate) = (\d+)\s*$', l)
    if m: cls[m.group(2)] = m.group(1)
# DDT object block lines
obj=None; isd=False; hdr=False; lines=[]
for l in mos:
    if re.match(r'^ +Object +lvl',l): hdr=True; continue
    if hdr:
        hdr=False; obj=l.split()[0]; isd='DDT ZAP' in l
        if isd and obj in cls: lines.append(f'object {obj} DDT-sha256-zap-{cls[obj]}')
        continue
    f=l.split()
    if isd and obj in cls and len(f)>5 and f[1] in ('L0','L1','L2'):
        lines.append(' '.join(f[:6]))
open(f'{dst}/ddt-blocks.txt','w').write('# zdb -e -p /dev/disk/by-id -ddddd tank: the L0/L1 lines of the DDT ZAP objects\n# blkid level DVA[0] size fill birth\n' + '\n'.join(lines) + '\n')
keys=[]
for name in sorted(os.listdir(f'{src}/ddtblk')):
    if not name.endswith('.bin'): continue
    o, blk = name[:-4].split('-')
    if o not in cls: continue
    b = open(f'{src}/ddtblk/{name}','rb').read()
    if struct.unpack_from('<Q', b, 0)[0] != 1<<63: continue
    hashN = len(b)>>5; base = 48+2*hashN; nch = (len(b)-2*hashN)//24-2
    for i in range(nch):
        c = b[base+24*i:base+24*i+24]
        if c[0] != 252: continue
        nc = struct.unpack_from('<H', c, 4)[0]
        k = b[base+24*nc+1:base+24*nc+9]
        keys.append((k.hex(), cls[o], blk))
keys.sort()
with open(f'{dst}/keys.tsv','w') as f:
    f.write('# first 64 bits of every DDT key (checksum word 0), its class, and the leaf block (hex offset in the object) it was read from\n')
    for k in keys: f.write('\t'.join(k)+'\n')
print(len(keys), cls)
