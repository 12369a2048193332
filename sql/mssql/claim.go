package mssql

// MaxClaim is the SQL Server dialect's Dialect.MaxClaim: the most rows one claiming
// statement takes. SQL Server escalates to a table lock when one statement holds 5,000 locks
// on one index (or heap) of a table, counting row/key locks and the intent locks on their
// pages. A claimed scheduler row moves in each nonclustered index whose key holds a column
// the claim sets (Status, ProcessingLeaseExpiresOn, UpdatedOn): a key deleted and a key
// inserted, each with its page, so up to 4 locks per row on such an index. 300 rows is then
// at most 1,200 locks per index, which leaves room for the rows the ordered read examines
// and does not take (a future NextRetryOn), under any page layout
// (docs/conventions.md#claim-sizes).
const MaxClaim = 300
