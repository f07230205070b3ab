package zdb

import "github.com/ddtsim/ddtsim/internal/testutil/testkit"

// The worked example of zfs-semantics §2.3 (internal/testkit).
const workedZdbS = testkit.WorkedZdbS

var workedHistogram = testkit.WorkedHistogram
