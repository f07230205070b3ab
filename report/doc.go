// Package report assembles ddtsim's report of a scan (Report: the zdb -S
// text, the histogram, the sizes and savings, the DDT size, the
// breakdown) and writes it: as text for a person, JSON, CSV and one HTML
// page. The zdb -S text itself and the numbers in zdb's format come from
// package zdb; setting a prediction beside real zdb output is package
// compare.
package report
