// Package dataplane is the seam between the manager's reconcilers and the
// NGINX pods: a DataPlane takes each Gateway's rendered files and
// endpoints and reports what its pods did with them (the Programmed
// condition of every status comes from State). AgentDataPlane drives
// real pods through the nginx-agent server and the endpoint feed;
// HeldFiles stands in for a manager run without data planes.
package dataplane
