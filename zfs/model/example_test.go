package model_test

import (
	"fmt"
	"log"

	"github.com/ddtsim/ddtsim/zfs/model"
)

// Parse the settings as a user types them (zfs create -o, zpool create
// layouts) and see the write policy they give.
func ExampleParse() {
	set, err := model.Parse(model.Text{Release: "2.2", Properties: []string{"recordsize=1M", "compression=zstd"}, Vdevs: []string{"raidz2 6"}})
	if err != nil {
		log.Fatal(err)
	}
	p, err := set.Policy()
	if err != nil {
		log.Fatal(err)
	}
	m := set.Model(p)
	fmt.Println(m.Release, m.RecordSize, m.Compression, m.Pool, m.Ashift)
	// Output:
	// 2.2.11 1048576 zstd-3 raidz2 6 12
}
