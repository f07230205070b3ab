package zdb_test

import (
	"fmt"
	"log"
	"os"

	"github.com/ddtsim/ddtsim/zdb"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
)

// Read what real zdb -S printed and get its totals and ratios back as
// numbers (each cell an interval: the integers that print as its token).
func ExampleParse() {
	f, err := os.Open("../testdata/sample-zfs/lz4-128k-a12.zdb-S.txt")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	p, err := zdb.Parse(f)
	if err != nil {
		log.Fatal(err)
	}
	t := p.Primary()
	fmt.Println(t.Kind, "table,", len(t.Rows), "buckets")
	for _, c := range []struct {
		name string
		v    nicenum.Value
	}{{"allocated blocks", t.Total.Allocated.Blocks}, {"allocated DSIZE", t.Total.Allocated.DSize}, {"referenced LSIZE", t.Total.Referenced.LSize}} {
		fmt.Printf("%s %s: %d to %d\n", c.name, c.v.Text, c.v.Lo, c.v.Hi)
	}
	fmt.Println("dedup", t.Ratios.Dedup.Text)
	// Output:
	// simulated table, 2 buckets
	// allocated blocks 17: 17 to 17
	// allocated DSIZE 1.21M: 1263535 to 1274019
	// referenced LSIZE 2.09M: 2186281 to 2196766
	// dedup 1.43
}
