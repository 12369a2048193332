package storetest

import "testing"

// The suite's index: every case of the conformance suite, by area, in the order it runs.
// Each area's Run function (Run, RunBudget, runDelivery, ...) runs its table through
// runCases, so a new case is one row here and one test function in its area's file.

// suiteCase is one case of the suite: the subtest's name and its check. A case with no name
// runs its check in place (an area whose cases sit at the suite's top level).
type suiteCase struct {
	name  string
	check func(*testing.T, Opener)
}

// runCases runs each case as a subtest named by the case, against stores from open.
func runCases(t *testing.T, open Opener, cases []suiteCase) {
	t.Helper()
	for _, c := range cases {
		if c.name == "" {
			c.check(t, open)
			continue
		}
		t.Run(c.name, func(t *testing.T) { c.check(t, open) })
	}
}

// suiteCases are the cases of Run (their checks are in storetest.go).
var suiteCases = []suiteCase{
	{"EnsureTable", testEnsureTable},
	{"EnsureIsIdempotent", testEnsureIdempotent},
	{"EnsureRejectsBadBatch", testEnsureBadBatch},
	{"ClaimHonoursDueAndRetryTime", testClaimDue},
	{"ClaimIsExclusiveUnderConcurrency", testClaimConcurrent},
	{"StaleTokenCannotComplete", testStaleToken},
	{"ExpiredLeaseCanBeReclaimed", testExpiredLease},
	{"VersionBumpsOnEveryWrite", testVersionBumps},
	{"CompleteWritesDeliveryAtomically", testCompleteAtomic},
	{"CompleteBatchGuardsEachItem", testCompleteBatch},
	{"CompleteBatchFencesEveryChunk", testCompleteBatchMixed},
	{"EffectOnceAnyOrder", testEffectOnceAnyOrder},
	{"SupportNotificationsAcrossLinks", testSupportNotificationsAcrossLinks},
	{"FailBackoffAndHold", testFail},
	{"NextWakeUpAndCounts", testNextWakeUp},
	{"SendClaim", testSendClaim},
	{"Outbox", testOutbox},
	{"SnapshotRevisionOrder", testSnapshots},
	{"EventDedupe", testEventDedupe},
	{"SettingsAndBusinessUnits", testSettings},
	{"Delivery", runDelivery},
	{"Idempotency", testIdempotency},
	{"IdempotencyConcurrent", testIdempotencyConcurrent},
	{"IdempotencyPurgeKeepsLiveLeases", testIdempotencyPurgeKeepsLiveLeases},
	{"Report", runReport},
	{"Support", runSupport},
	{"Inbox", runInbox},
	{"PushDevice", runPushDevice},
	{"Preference", runPreference},
	{"DeadLetterAudit", runDeadLetterAudit},
	{"", RunLifecycle},
	{"", RunGateway},
	{"Attribute", runAttribute},
	{"", RunCampaign},
	{"RecipientActivity", testRecipientActivity},
	{"TemplateList", testTemplateList},
	{"Budget", RunBudget},
	{"", RunKeys},
	{"", RunSessions},
}

// deliveryCases are the cases of delivery (their checks are in delivery.go).
var deliveryCases = []suiteCase{
	{"CommandEffectKeyAndFacts", testCommandFacts},
	{"SendClaimRetryHoldAndDoubt", testSendClaimStates},
	{"ClaimDueAndWakeUp", testClaimDue2},
	{"UnknownQueueAndResolve", testResolve},
	{"HeldListAndRelease", testHeldRelease},
	{"TemplatesVersionedPerBusinessUnit", testTemplates},
	{"FactProjectionKeepsHighestRevision", testProjection},
	{"ProviderReferenceFitsItsColumn", testProviderReferenceBound},
	{"ClaimDueTakesQueuedJobsWhoseMessageWasLost", testClaimDueOrphans},
	{"ThroughputPerMinute", testThroughput},
	{"ClaimManyAndFinishManyGuardEachItem", testClaimFinishMany},
	{"ClaimManyMixedStatesAcrossChunks", testClaimManyMixed},
	{"FinishManyMixedItemsAcrossChunks", testFinishManyMixed},
	{"BatchFactsInOneEnvelope", testBatchFactsEnvelope},
	{"ClaimManyReturnsTheStoredJobAndFinishManyItsFacts", testClaimManyWholeJob},
	{"SendClaimsKeepTheFirstClaim", testFirstClaimKept},
}

// reportCases are the cases of report (their checks are in report.go).
var reportCases = []suiteCase{
	{"ReportSubscriptions", testReportSubscriptions},
	{"ReportRunRegistry", testReportRunRegistry},
	{"ReportSchedulerLists", testReportSchedulerLists},
	{"ReportOwnershipGuard", testReportOwnership},
	{"ReportOwnershipConcurrent", testReportOwnershipConcurrent},
	{"ReportOwnershipReleaseAll", testReportOwnershipReleaseAll},
	{"ReportRollout", testReportRollout},
	{"OperatorAudit", testOperatorAudit},
	{"ReportActivity", testReportActivity},
}

// supportCases are the cases of support (their checks are in support.go).
var supportCases = []suiteCase{
	{"SupportFindDriversAndFilters", testSupportFind},
	{"SupportFindPages", testSupportFindPages},
	{"SupportGet", testSupportGet},
	{"SupportActRelease", testSupportRelease},
	{"SupportActRetryAndCancel", testSupportRetryCancel},
	{"SupportActRunNow", testSupportRunNow},
	{"SupportRetryOfCompletedRow", testSupportRetryCompleted},
	{"SupportCancelSticksThroughEnsure", testSupportCancelSticks},
	{"SupportActRejectsBadInput", testSupportActBadInput},
	{"SupportReleaseBatchPace", testSupportReleaseBatch},
	{"SupportMetrics", testSupportMetrics},
	{"SupportMetricsBudget", testSupportMetricsBudget},
	{"MetricsHistory", testMetricsHistory},
	{"MetricsCounts", testMetricsCounts},
	{"SupportStaleEvent", testSupportStaleEvent},
	{"SupportNotificationList", testSupportNotifications},
	{"SupportRetryKeepsWhenTheRowEnded", testSupportRetryKeepsEndTime},
	{"SupportMetricsOldestDueAfterABackoff", testSupportMetricsOldestDueAfterBackoff},
}

// inboxCases are the cases of inbox (their checks are in inbox.go).
var inboxCases = []suiteCase{
	{"InsertIsIdempotentByDeliveryKey", testInboxIdempotent},
	{"ConcurrentDuplicateDeliveries", testInboxConcurrent},
	{"ListPagesAndStates", testInboxList},
	{"MarkReadIsVersionGuarded", testInboxMarkRead},
}

// pushDeviceCases are the cases of pushDevice (their checks are in device.go).
var pushDeviceCases = []suiteCase{
	{"RegisterIsIdempotent", testDeviceIdempotent},
	{"BoundedPerCustomer", testDeviceBound},
	{"RetireAndReactivate", testDeviceRetire},
	{"TokenMovesBetweenCustomers", testDeviceMoves},
}

// lifecycleCases are the cases of lifecycle (their checks are in lifecycle.go).
var lifecycleCases = []suiteCase{
	{"BusinessUnitLifecycle", testBusinessUnitLifecycle},
	{"SettingInsertUpdateList", testSettingLifecycle},
	{"SnapshotPaging", testSnapshotPaging},
	{"SchedulerListsForLifecycle", testSchedulerLifecycleLists},
	{"ThresholdEdgeRevisionGuard", testThresholdEdge},
	{"ThresholdEdgeConcurrent", testThresholdEdgeConcurrent},
	{"ReconcileState", testReconcileState},
}

// gatewayCases are the cases of gateway (their checks are in gateway.go).
var gatewayCases = []suiteCase{
	{"RegistryVersions", testRegistryVersions},
	{"GatewayAcceptOnce", testGatewayAcceptOnce},
	{"GatewayMessageIDTaken", testGatewayMessageIDTaken},
	{"KeysDifferingByCaseStaySeparate", testKeysDifferingByCase},
}

// attributeCases are the cases of attribute (their checks are in attribute.go).
var attributeCases = []suiteCase{
	{"ApplyWritesRowsDeltasAndOutboxAtomically", testAttributeApply},
	{"RedeliveryIsANoOp", testAttributeRedelivery},
	{"ProcessedPurgeKeepsTheWindow", testAttributeProcessedPurge},
	{"StaleVersionIsLeaseLost", testAttributeStale},
	{"DecideErrorWritesNothing", testAttributeDecideError},
	{"FlushFoldsDeltasInBoundedBatches", testAttributeFlush},
	{"TopReadsTheRankingInOrder", testAttributeTop},
	{"ConcurrentIncrementsAreSerialised", testAttributeConcurrent},
	{"BatchAppliesInOrderInOneTransaction", testAttributeApplyBatch},
}

// campaignCases are the cases of campaign (their checks are in campaign.go).
var campaignCases = []suiteCase{
	{"CampaignCommandThroughput", testCommandThroughput},
	{"CampaignSaveIfMatchAndTriggers", testCampaignSave},
	{"CampaignStartOnce", testCampaignStartOnce},
	{"CampaignClaimExclusiveAndFreezes", testCampaignClaim},
	{"CampaignClaimKeepsTheFirstClaim", testCampaignFirstClaimKept},
	{"CampaignClaimManyInOrderAllOrNothing", testCampaignClaimMany},
	{"CampaignFinishGuardedWithHook", testCampaignFinish},
	{"CampaignFinishManyLeaseLostPerItem", testCampaignFinishMany},
	{"CampaignAdvanceOnce", testCampaignAdvance},
	{"CampaignAdvanceManyInOrderAllOrNothing", testCampaignAdvanceMany},
	{"CampaignStartManyInOrderAllOrNothing", testCampaignStartMany},
	{"CampaignManualResolution", testCampaignResolve},
	{"CampaignExecutionListNewestFirstScoped", testCampaignExecutionList},
	{"CampaignExecutionFindByStatusAndRecipient", testCampaignExecutionFind},
	{"CampaignSaveWritesItsAuditInTheSameTransaction", testCampaignAudit},
	{"CampaignProjectionExactUnderReplay", testCampaignProjection},
	{"CampaignProjectionConcurrentFirstFacts", testCampaignProjectionConcurrent},
	{"OutboxLeaseAndPurge", testOutboxLease},
	{"OutboxClaimAfterID", testOutboxClaimAfter},
	{"OutboxClaimSkip", testOutboxClaimSkip},
	{"OutboxClaimDestination", testOutboxClaimDestination},
	{"OutboxClaimSessionHold", testOutboxClaimSessionHold},
}

// budgetCases are the cases of budget (their checks are in budget.go).
var budgetCases = []suiteCase{
	{"ReserveIsConditional", testBudgetReserve},
	{"ConcurrentReservesNeverExceedMaxCost", testBudgetReserveConcurrent},
	{"TransferCostAddedOnce", testFeeTransferOnce},
	{"FailedChargeReleasesAndRehold", testFeeFailedRelease},
	{"ReleaseRules", testReleaseRules},
	{"ReleaseOfStaleAttemptChangesNothing", testReleaseStaleAttempt},
	{"ConcurrentTransferBeginsOneRow", testFeeTransferBeginConcurrent},
	{"MaxCostGuarded", testBudgetMaxCost},
	{"PricePolicyAndFrozenPrice", testPricePolicy},
	{"FeeProjectionExactUnderReplay", testFeeProjection},
}
