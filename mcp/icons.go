package mcp

import (
	"encoding/base64"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Icons a GUI host shows beside the server and each tool (MCP 2025-11-25
// icons). They are data URIs of small SVGs, so that a host never fetches
// anything to draw them; one per tool group (each tool's row in tools.go
// names its own), drawn in Jupyter's orange, which reads on light and dark
// backgrounds alike.

const (
	iconNotebook = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="#F37726" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><path d="M5 3h10l4 4v14H5z"/><path d="M15 3v4h4M9 11h6M9 15h6M9 19h3"/></svg>`
	iconCell     = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="#F37726" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><rect x="3" y="5" width="18" height="14" rx="2"/><path d="M7 10l3 2-3 2M12 15h5"/></svg>`
	iconExecute  = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="#F37726" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><circle cx="12" cy="12" r="9"/><path d="M10 8l6 4-6 4z"/></svg>`
	iconServer   = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="#F37726" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><rect x="4" y="4" width="16" height="6" rx="1"/><rect x="4" y="14" width="16" height="6" rx="1"/><path d="M8 7h.01M8 17h.01"/></svg>`
	iconSandbox  = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="#F37726" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><path d="M12 3l8 4.5v9L12 21l-8-4.5v-9z"/><path d="M4 7.5l8 4.5 8-4.5M12 12v9"/></svg>`
	iconJupyter  = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="#F37726" stroke-width="2" stroke-linecap="round"><path d="M4 9c3-4 13-4 16 0M4 15c3 4 13 4 16 0"/><circle cx="12" cy="12" r="2"/></svg>`
)

// svgIcon is an SVG as an icon a host can draw without fetching anything.
func svgIcon(svg string) []sdk.Icon {
	return []sdk.Icon{{
		Source:   "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(svg)),
		MIMEType: "image/svg+xml",
		Sizes:    []string{"any"},
	}}
}
