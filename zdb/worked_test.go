package zdb

import "github.com/ddtsim/ddtsim/ddt"

// The worked example of zfs-semantics §2.3, as real zdb -S prints it.
const workedZdbS = `Simulated DDT histogram:

bucket              allocated                       referenced          
______   ______________________________   ______________________________
refcnt   blocks   LSIZE   PSIZE   DSIZE   blocks   LSIZE   PSIZE   DSIZE
------   ------   -----   -----   -----   ------   -----   -----   -----
     1        1      5K      5K      8K        1      5K      5K      8K
     2        3    384K    384K    384K        6    768K    768K    768K
     8        1    128K    128K    128K        8      1M      1M      1M
 Total        5    517K    517K    520K       15   1.75M   1.75M   1.76M

dedup = 3.46, compress = 1.00, copies = 1.00, dedup * compress / copies = 3.46

`

func workedHistogram() *ddt.Histogram {
	h := &ddt.Histogram{}
	h.Add(1, 5120, 5120, 8192)
	for range 3 {
		h.Add(2, 131072, 131072, 131072)
	}
	h.Add(8, 131072, 131072, 131072)
	return h
}
