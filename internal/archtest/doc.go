// Package archtest holds the tests that guard the layering of Gatewall's
// packages (layers_test.go): the pure core does no I/O and reaches no
// client, controller or transport, and its stages only import downwards.
// It has no code of its own.
package archtest
