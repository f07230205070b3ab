package breakdown

// The fixture of the tests, for the test of the breakdown in the report
// (report_test.go, package breakdown_test).
var (
	BreakdownTree = breakdownTree
	ScanBreakdown = scanBreakdown
)
