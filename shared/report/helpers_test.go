package report_test

import (
	"errors"

	"github.com/automation-platform/automation/shared/automation"
)

func asErr(err error, target **automation.Error) bool { return errors.As(err, target) }
