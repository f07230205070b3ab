// Package ddt is ddtsim's dedup table: one entry per unique block content,
// the refcnt histogram that `zdb -S` prints, and the ratios derived from it.
//
// It models what cmd/zdb/zdb.c: zdb_ddt_add_cb() accumulates per key and
// what dump_simulated_ddt() and dump_dedup_ratio() derive from those sums.
package ddt
