package gateway

// CountForTest counts one result under (unit, type, status), as Ingest does.
func (m *Metrics) CountForTest(bu, typ, status string) {
	m.count(Result{businessUnit: bu, Type: typ, Status: status, RegistryVersion: 1})
}
