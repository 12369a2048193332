// Package phonenumber checks phone numbers as the SMS and WhatsApp channels need them: E.164
// ("+" and 7 to 15 digits, nothing else) with a country calling code that exists and a
// length that is possible for that country, on github.com/nyaruka/phonenumbers (Google's
// libphonenumber metadata). It is its own package so that every place that stores or
// accepts a number (the channels, a campaign's NOTIFICATION_SMS parameters, the inbound STOP
// webhook) applies the one rule; docs/channels.md#sms.
package phonenumber
