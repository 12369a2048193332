package local

import (
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/topology"
)

// Definitions turns rows of the topology table into the function definitions NewHost takes,
// as funchost.LoadFunctionFolders would read them from the function folders the table is
// tested against: each with its one trigger binding (direction "in"; Service Bus triggers on
// the ServiceBusConnection setting). The runtime's own host uses them, so it needs no
// function folders on disk.
func Definitions(fs []topology.Function) []funchost.FunctionDef {
	out := make([]funchost.FunctionDef, 0, len(fs))
	for _, f := range fs {
		b := funchost.BindingDef{Name: f.Binding, Type: f.Trigger, Direction: "in", Schedule: f.Schedule,
			QueueName: f.Queue, TopicName: f.Topic, SubscriptionName: f.Subscription, IsSessionsEnabled: f.Sessions,
			Route: f.Route, Methods: append([]string(nil), f.Methods...)}
		switch f.Trigger {
		case topology.ServiceBusTrigger:
			b.Connection, b.Cardinality = "ServiceBusConnection", funchost.CardinalityOne
			if f.Many {
				// What function.json says: a batch needs dataType string (funchost.LoadFunctionFolders).
				b.Cardinality, b.DataType = funchost.CardinalityMany, funchost.DataTypeString
			}
		case topology.HTTPTrigger:
			b.AuthLevel = "function"
		}
		out = append(out, funchost.FunctionDef{Name: f.Name, Trigger: b, Bindings: []funchost.BindingDef{b}})
	}
	return out
}
