package capi2mapi

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// report collects a conversion's warnings and errors.
type report struct {
	warnings []string
	errs     field.ErrorList
}

// warn records that the field at p was dropped or approximated.
func (r *report) warn(p *field.Path, format string, args ...any) {
	r.warnings = append(r.warnings, p.String()+": "+fmt.Sprintf(format, args...))
}

// fail records that the field at p cannot be converted.
func (r *report) fail(e *field.Error) { r.errs = append(r.errs, e) }
