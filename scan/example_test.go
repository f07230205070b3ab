package scan_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/ddtsim/ddtsim/compare"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/zdb"
	"github.com/ddtsim/ddtsim/zfs/model"
)

// Scan a directory as OpenZFS 2.3.2 would store it on a one-disk pool with
// compression=lz4, and print the dedup table as zdb -S prints it. The
// output is what real zdb -S printed for the same files
// (testdata/sample-zfs/lz4-128k-a12.zdb-S.txt; trailing blanks trimmed).
func ExampleRun() {
	set := model.Settings{Release: "2.3.2", Compression: "lz4", Sparse: model.SparseAlways}
	res, err := scan.Run(context.Background(), set, []string{"../testdata/sample"}, scan.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer res.Close()
	rep, err := res.Report(0)
	if err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSuffix(rep.Zdb, "\n"), "\n") {
		fmt.Println(strings.TrimRight(line, " "))
	}
	// Output:
	// Simulated DDT histogram:
	//
	// bucket              allocated                       referenced
	// ______   ______________________________   ______________________________
	// refcnt   blocks   LSIZE   PSIZE   DSIZE   blocks   LSIZE   PSIZE   DSIZE
	// ------   ------   -----   -----   -----   ------   -----   -----   -----
	//      1       10   1.04M    700K    700K       10   1.04M    700K    700K
	//      2        7    542K    534K    536K       14   1.06M   1.04M   1.05M
	//  Total       17   1.56M   1.20M   1.21M       24   2.09M   1.73M   1.73M
	//
	// dedup = 1.43, compress = 1.21, copies = 1.00, dedup * compress / copies = 1.73
}

// Set a scan beside what real zdb -S printed for the same files on a real
// pool, and see whether they agree. Here the text is the real one for the
// sample (OpenZFS 2.3.2, lz4); a model with compression=off would differ.
func ExampleResult_Compare() {
	for _, compression := range []string{"lz4", "off"} {
		set := model.Settings{Release: "2.3.2", Compression: compression, Sparse: model.SparseAlways}
		res, err := scan.Run(context.Background(), set, []string{"../testdata/sample"}, scan.Options{})
		if err != nil {
			log.Fatal(err)
		}
		rep, err := res.Report(0)
		if err != nil {
			log.Fatal(err)
		}
		f, err := os.Open("../testdata/sample-zfs/lz4-128k-a12.zdb-S.txt")
		if err != nil {
			log.Fatal(err)
		}
		actual, err := zdb.Parse(f)
		f.Close()
		if err != nil {
			log.Fatal(err)
		}
		cmp, err := res.Compare(rep, actual, "zdb -S", compare.Options{})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("compression=%s: %s\n", compression, cmp.Outcome)
		res.Close()
	}
	// Output:
	// compression=lz4: equal
	// compression=off: different
}
