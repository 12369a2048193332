package localtime_test

import (
	"fmt"
	"time"

	"github.com/automation-platform/automation/shared/localtime"
)

// 02:30 does not exist on Sydney's DST start day; under docs/architecture.md#dst-product-rule,
// DST product rule, it moves forward by the gap (one hour) to 03:30 AEDT.
func ExampleResolveDetail() {
	syd, err := localtime.LoadZone("Australia/Sydney")
	if err != nil {
		panic(err)
	}
	u, res := localtime.ResolveDetail(syd, localtime.MustDate("2026-10-04"), localtime.TimeOfDay{Hour: 2, Minute: 30})
	fmt.Println(u.Format(time.RFC3339), u.In(syd).Format(time.RFC3339), res)

	// On the fall-back day 02:30 happens twice; the earlier instant wins.
	u, res = localtime.ResolveDetail(syd, localtime.MustDate("2026-04-05"), localtime.TimeOfDay{Hour: 2, Minute: 30})
	fmt.Println(u.Format(time.RFC3339), u.In(syd).Format(time.RFC3339), res)
	// Output:
	// 2026-10-03T16:30:00Z 2026-10-04T03:30:00+11:00 gap
	// 2026-04-04T15:30:00Z 2026-04-05T02:30:00+11:00 overlap
}

func ExampleAnniversaryIn() {
	fmt.Println(localtime.AnniversaryIn(localtime.MustDate("2024-02-29"), 2025))
	fmt.Println(localtime.AnniversaryIn(localtime.MustDate("2024-02-29"), 2028))
	// Output:
	// 2025-02-28
	// 2028-02-29
}

func ExampleParseDate() {
	_, err := localtime.ParseDate("2027-02-29")
	fmt.Println(err)
	// Output:
	// localtime: invalid date "2027-02-29": day 29 out of range 01..28 for February 2027
}
