package zdb

// Test helpers for the tests in package zdb_test (FuzzParse, and the
// tests of parse_variants_test.go), which compare what was parsed (package
// compare imports zdb) and cannot see package zdb's own test files.
var (
	WorkedZdbS      = workedZdbS
	WorkedHistogram = workedHistogram
	ZdbOutputs      = zdbOutputs
	RowText         = rowText
	RatioText       = ratioText
)
