// Package msix stands in for go.digitalxero.dev/go-msix, which the module
// proxy khook builds from does not serve. nfpm's MSIX packager links it; khook
// builds no MSIX packages, so every build fails with an error saying so.
package msix

import (
	"errors"
	"io"
)

var errUnavailable = errors.New("MSIX packaging is not available in khook's GoReleaser build (go.digitalxero.dev/go-msix is stubbed in tools/goreleaser)")

type Identity struct{ Name, Version, Publisher, ProcessorArchitecture, ResourceID string }
type Properties struct{ DisplayName, PublisherDisplayName, Logo, Description string }
type TargetDeviceFamily struct{ Name, MinVersion, MaxVersionTested string }
type Dependencies struct{ TargetDeviceFamilies []TargetDeviceFamily }
type Resource struct{ Language string }
type VisualElements struct {
	DisplayName, Description, BackgroundColor, Square150x150Logo, Square44x44Logo string
}
type Application struct {
	ID, Executable, EntryPoint string
	VisualElements             VisualElements
}
type Capability struct{ Name string }
type DeviceCapability struct{ Name string }
type RestrictedCapability struct{ Name string }
type Capabilities struct {
	Capabilities       []Capability
	DeviceCapabilities []DeviceCapability
	Restricted         []RestrictedCapability
}
type Manifest struct {
	Identity     Identity
	Properties   Properties
	Dependencies Dependencies
	Resources    []Resource
	Applications []Application
	Capabilities Capabilities
}
type SignOptions struct{ Certificate, PrivateKey, CertChain any }
type Builder struct {
	Manifest    Manifest
	SignOptions *SignOptions
}

func NewBuilder() *Builder                             { return &Builder{} }
func (b *Builder) AddFile(dest, source string) error   { return errUnavailable }
func (b *Builder) Build(w io.Writer) error             { return errUnavailable }
func LoadPFX(path, pass string) (any, any, any, error) { return nil, nil, nil, errUnavailable }
