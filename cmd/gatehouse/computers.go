package main

import "github.com/gatehouse/gatehouse/rpc/lan"

// fromLine says where a pair request came from: its address, and the page
// of another computer it was sent from, which the device will be reached
// from only (rpc/lan/computers.go). A page the person does not know is a
// reason to deny.
func fromLine(r *lan.Request) string {
	if r.Page == "" {
		return r.From
	}
	return r.From + " through the page at " + shown(r.Page)
}

// deviceName is a device's name, with the page of another computer it
// paired from.
func deviceName(d lan.Device) string {
	if d.Page == "" {
		return shown(d.Name)
	}
	return shown(d.Name) + " (from the page at " + shown(d.Page) + ")"
}
