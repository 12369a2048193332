package sqlstore

import (
	"context"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

// farFuture stands for "from the newest" in a cursor on an instant.
var farFuture = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// GatewayEventListByCustomer implements store.RecipientActivityStore.
func (s *Store) GatewayEventListByCustomer(ctx context.Context, p store.GatewayEventListParams) ([]store.GatewayEventRecord, error) {
	before := p.BeforeOn
	if before.IsZero() {
		before = farFuture
	}
	return queryPage(ctx, s, "GatewayEventListByCustomer", p.Limit, func(r rowScanner) (store.GatewayEventRecord, error) {
		var e store.GatewayEventRecord
		err := r.Scan(&e.Source, &e.ID, &e.Type, &e.BusinessUnitID, &e.CustomerID, &e.RegistryVersion, &e.Routes, s.t(&e.AcceptedOn))
		return e, err
	}, named("BusinessUnitId", p.BusinessUnitID, "CustomerId", p.CustomerID, "BeforeOn", s.tm(before), "BeforeEventId", p.BeforeEventID, "Limit", p.Limit)...)
}

// NotificationTemplateList implements store.TemplateListStore.
func (s *Store) NotificationTemplateList(ctx context.Context, bu, afterKey string, limit int) ([]store.NotificationTemplate, error) {
	return queryPage(ctx, s, "NotificationTemplateList", limit, s.scanTemplate, named("BusinessUnitId", bu, "AfterKey", afterKey, "Limit", limit)...)
}

// NotificationTemplateVersions implements store.TemplateListStore.
func (s *Store) NotificationTemplateVersions(ctx context.Context, key, bu string, limit int) ([]store.NotificationTemplate, error) {
	return queryPage(ctx, s, "NotificationTemplateVersions", limit, s.scanTemplate, named("TemplateKey", key, "BusinessUnitId", bu, "Limit", limit)...)
}
