package app

import (
	"fmt"
	"io"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/delivery/channel"
)

// ChannelsFromConfig builds the delivery channels the configuration enables: "log" always
// (JSON lines to logOut), "webhook" when AUTOMATION_WEBHOOK_SECRET is set, "email" when
// AUTOMATION_SMTP_HOST is set, "push" (FCM, over the device registry devices) when
// AUTOMATION_FCM_CREDENTIALS is set, "sms" (ACS) when AUTOMATION_ACS_CONNECTION_STRING and AUTOMATION_SMS_FROM are set, "whatsapp"
// (ACS Advanced Messaging) when AUTOMATION_WHATSAPP_CHANNEL_ID is set too. local (the embedded runtime) allows webhook URLs on
// http://localhost; in Azure every webhook URL must be https.
func ChannelsFromConfig(cfg config.Config, logOut io.Writer, local bool, clock automation.Clock, devices channel.PushDevices) (map[string]delivery.Channel, error) {
	if logOut == nil {
		logOut = io.Discard
	}
	out := map[string]delivery.Channel{"log": &delivery.LogChannel{W: logOut}}
	if cfg.Webhook.Secret != "" {
		var previous [][]byte
		if cfg.Webhook.PreviousSecret != "" {
			previous = [][]byte{[]byte(cfg.Webhook.PreviousSecret)}
		}
		w, err := channel.NewWebhook(channel.WebhookConfig{Secret: []byte(cfg.Webhook.Secret), PreviousSecrets: previous, Idempotent: cfg.Webhook.Idempotent,
			Timeout: cfg.Webhook.Timeout, AllowLocalHTTP: local, AllowPrivateNetworks: cfg.Webhook.AllowPrivateNetworks, Clock: clock})
		if err != nil {
			return nil, fmt.Errorf("app: webhook channel: %w", err)
		}
		out["webhook"] = w
	}
	if cfg.SMTP.Host != "" {
		m, err := channel.NewSMTP(channel.SMTPConfig{Host: cfg.SMTP.Host, Port: cfg.SMTP.Port,
			Security: channel.SMTPSecurity(cfg.SMTP.Security), Username: cfg.SMTP.Username, Password: cfg.SMTP.Password,
			From: cfg.SMTP.From})
		if err != nil {
			return nil, fmt.Errorf("app: email channel: %w", err)
		}
		out["email"] = m
	}
	if cfg.FCM.Credentials != "" {
		if devices == nil {
			return nil, fmt.Errorf("app: push channel: no device registry")
		}
		p, err := channel.NewFCM(channel.FCMConfig{CredentialsJSON: []byte(cfg.FCM.Credentials), ProjectID: cfg.FCM.ProjectID,
			Endpoint: cfg.FCM.Endpoint, Timeout: cfg.FCM.Timeout, Devices: devices, Clock: clock})
		if err != nil {
			return nil, fmt.Errorf("app: push channel: %w", err)
		}
		out[channel.PushChannelName] = p
	}
	if cfg.ACS.ConnectionString != "" && cfg.ACS.SMSFrom != "" {
		s, err := channel.NewSMS(channel.SMSConfig{ConnectionString: cfg.ACS.ConnectionString, From: cfg.ACS.SMSFrom, Clock: clock})
		if err != nil {
			return nil, fmt.Errorf("app: sms channel: %w", err)
		}
		out[channel.SMSChannelName] = s
	}
	if cfg.ACS.WhatsAppChannelID != "" {
		w, err := channel.NewWhatsApp(channel.WhatsAppConfig{ConnectionString: cfg.ACS.ConnectionString, ChannelRegistrationID: cfg.ACS.WhatsAppChannelID, Clock: clock})
		if err != nil {
			return nil, fmt.Errorf("app: whatsapp channel: %w", err)
		}
		out[channel.WhatsAppChannelName] = w
	}
	return out, nil
}
