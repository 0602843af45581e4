package ui

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strconv"
	"strings"
)

// An image output opened full-window is drawn with the best protocol the
// terminal has: the kitty graphics protocol (kitty, Ghostty; WezTerm only
// when its enable_kitty_graphics is set, so WezTerm gets iTerm2's),
// iTerm2's inline images (iTerm2, WezTerm), sixel (foot, mlterm, Windows
// Terminal, xterm started with sixel), or half blocks, which every
// terminal draws. Inside tmux the three graphics protocols only get
// through with allow-passthrough on, and then wrapped.
//
// Images come from kernels and are not trusted: they are decoded by Go's
// image packages within size limits and encoded again by us. No byte of a
// kernel's image reaches the terminal except as base64 inside an escape
// sequence we wrote.

// ImageProtocol is how images are drawn full-window.
type ImageProtocol string

// The protocols, and "auto" (detect).
const (
	ImageAuto       ImageProtocol = "auto"
	ImageKitty      ImageProtocol = "kitty"
	ImageITerm2     ImageProtocol = "iterm2"
	ImageSixel      ImageProtocol = "sixel"
	ImageHalfBlocks ImageProtocol = "halfblocks"
)

// ImageProtocols lists the values --image-protocol takes.
var ImageProtocols = []string{string(ImageAuto), string(ImageKitty), string(ImageITerm2), string(ImageSixel), string(ImageHalfBlocks)}

// imageTarget is where and how the image goes: the protocol, whether
// escapes are wrapped for tmux, and why this protocol (said on screen).
type imageTarget struct {
	proto  ImageProtocol
	tmux   bool   // wrap every escape in tmux's passthrough
	reason string // "forced", "KITTY_WINDOW_ID", "terminal answered", ...
}

// termProbe is what the terminal answered to the start-up queries.
type termProbe struct {
	answered bool // the device attributes came back: the rest is final
	kitty    bool // the kitty graphics query was answered OK
	sixel    bool // the primary device attributes list 4 (sixel)
	cellW    int  // character cell size in pixels, 0 when not told
	cellH    int
}

// probeQuery is what the terminal is asked at start-up: a kitty graphics
// query of a 1×1 image (answered only by terminals with the protocol), the
// cell size in pixels (XTWINOPS 16), and the primary device attributes,
// which every terminal answers last, so its answer ends the wait.
const probeQuery = "\x1b_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\x1b\\" + "\x1b[16t" + "\x1b[c"

// parseProbe reads the answers to probeQuery.
func parseProbe(b []byte) termProbe {
	var p termProbe
	s := string(b)
	if i := strings.Index(s, "\x1b_Gi=31;"); i >= 0 {
		p.kitty = strings.HasPrefix(s[i+len("\x1b_Gi=31;"):], "OK")
	}
	if i := strings.Index(s, "\x1b[6;"); i >= 0 {
		if j := strings.IndexByte(s[i:], 't'); j > 0 {
			parts := strings.Split(s[i+len("\x1b[6;"):i+j], ";")
			if len(parts) == 2 {
				p.cellH, _ = strconv.Atoi(parts[0])
				p.cellW, _ = strconv.Atoi(parts[1])
			}
		}
	}
	if i := strings.Index(s, "\x1b[?"); i >= 0 {
		if j := strings.IndexByte(s[i:], 'c'); j > 0 {
			p.answered = true
			for _, a := range strings.Split(s[i+3:i+j], ";") {
				if a == "4" {
					p.sixel = true
				}
			}
		}
	}
	return p
}

// probeDone reports whether b holds the device attributes' answer, the
// last one the terminal sends.
func probeDone(b []byte) bool {
	i := bytes.Index(b, []byte("\x1b[?"))
	return i >= 0 && bytes.IndexByte(b[i:], 'c') > 0
}

// needsProbe reports whether the environment leaves the protocol open, so
// that the terminal must be asked.
func needsProbe(forced ImageProtocol, env func(string) string) bool {
	if forced != ImageAuto && forced != "" {
		return false
	}
	if env("TMUX") != "" || env("TERM") == "dumb" {
		return false
	}
	_, ok := protocolFromEnv(env)
	return !ok
}

// protocolFromEnv names the protocol of a terminal known by its
// environment.
func protocolFromEnv(env func(string) string) (imageTarget, bool) {
	term, prog := env("TERM"), env("TERM_PROGRAM")
	switch {
	case env("KITTY_WINDOW_ID") != "" || term == "xterm-kitty":
		return imageTarget{proto: ImageKitty, reason: "kitty"}, true
	case prog == "ghostty" || term == "xterm-ghostty" || env("GHOSTTY_RESOURCES_DIR") != "":
		return imageTarget{proto: ImageKitty, reason: "Ghostty"}, true
	case prog == "WezTerm" || env("WEZTERM_PANE") != "" || env("WEZTERM_EXECUTABLE") != "":
		return imageTarget{proto: ImageITerm2, reason: "WezTerm"}, true
	case prog == "iTerm.app" || env("LC_TERMINAL") == "iTerm2" || env("ITERM_SESSION_ID") != "":
		return imageTarget{proto: ImageITerm2, reason: "iTerm2"}, true
	case strings.HasPrefix(term, "foot"):
		return imageTarget{proto: ImageSixel, reason: "foot"}, true
	case term == "mlterm" || env("MLTERM") != "":
		return imageTarget{proto: ImageSixel, reason: "mlterm"}, true
	case env("WT_SESSION") != "":
		return imageTarget{proto: ImageSixel, reason: "Windows Terminal"}, true
	}
	return imageTarget{}, false
}

// chooseProtocol decides how images are drawn: forced wins; inside tmux,
// half blocks unless passthrough is on and the terminal around tmux is
// known by its environment; else the environment, else what the terminal
// answered, else half blocks.
func chooseProtocol(forced ImageProtocol, env func(string) string, passthrough bool, probe termProbe) imageTarget {
	inTmux := env("TMUX") != ""
	if forced != ImageAuto && forced != "" {
		return imageTarget{proto: forced, tmux: inTmux && forced != ImageHalfBlocks, reason: "--image-protocol"}
	}
	if inTmux {
		if !passthrough {
			return imageTarget{proto: ImageHalfBlocks, reason: "tmux without allow-passthrough"}
		}
		if t, ok := protocolFromEnv(env); ok {
			t.tmux, t.reason = true, t.reason+" through tmux"
			return t
		}
		return imageTarget{proto: ImageHalfBlocks, reason: "tmux: terminal outside unknown"}
	}
	if t, ok := protocolFromEnv(env); ok {
		return t
	}
	switch {
	case probe.kitty:
		return imageTarget{proto: ImageKitty, reason: "terminal answered the kitty query"}
	case probe.sixel:
		return imageTarget{proto: ImageSixel, reason: "terminal reports sixel"}
	}
	return imageTarget{proto: ImageHalfBlocks, reason: "no graphics protocol found"}
}

// Limits on images decoded for drawing. A PNG header can claim any size:
// the header is read first and an image above these is refused before a
// pixel is allocated.
const (
	maxDecodeSide   = 8192
	maxDecodePixels = 32 << 20
)

// decodeLimited decodes a PNG, JPEG or GIF within the limits above.
func decodeLimited(mime string, data []byte) (image.Image, error) {
	var (
		cfg    func([]byte) (image.Config, error)
		decode func([]byte) (image.Image, error)
	)
	switch mime {
	case "image/jpeg":
		cfg = func(b []byte) (image.Config, error) { return jpeg.DecodeConfig(bytes.NewReader(b)) }
		decode = func(b []byte) (image.Image, error) { return jpeg.Decode(bytes.NewReader(b)) }
	case "image/gif":
		cfg = func(b []byte) (image.Config, error) { return gif.DecodeConfig(bytes.NewReader(b)) }
		decode = func(b []byte) (image.Image, error) { return gif.Decode(bytes.NewReader(b)) }
	case "image/png", "":
		cfg = func(b []byte) (image.Config, error) { return png.DecodeConfig(bytes.NewReader(b)) }
		decode = func(b []byte) (image.Image, error) { return png.Decode(bytes.NewReader(b)) }
	default:
		return nil, fmt.Errorf("%s is not drawn here (png, jpeg and gif are)", mime)
	}
	c, err := cfg(data)
	if err != nil {
		return nil, err
	}
	if c.Width <= 0 || c.Height <= 0 || c.Width > maxDecodeSide || c.Height > maxDecodeSide || c.Width*c.Height > maxDecodePixels {
		return nil, fmt.Errorf("image of %d×%d pixels is too large to draw", c.Width, c.Height)
	}
	return decode(data)
}

// kittyImageID names our image in the kitty protocol, so that closing
// deletes ours and nothing else.
const kittyImageID = 4711

// kittyChunk is the largest base64 payload of one kitty escape.
const kittyChunk = 4096

// kittyEscape transmits a PNG and places it over cols×rows cells at the
// cursor, without moving the cursor (C=1) and asking for no answer (q=2:
// an answer would reach the workbench as key presses).
func kittyEscape(pngData []byte, cols, rows int) string {
	payload := base64.StdEncoding.EncodeToString(pngData)
	var sb strings.Builder
	for i := 0; i < len(payload) || i == 0; i += kittyChunk {
		end := min(i+kittyChunk, len(payload))
		more := 0
		if end < len(payload) {
			more = 1
		}
		sb.WriteString("\x1b_G")
		if i == 0 {
			fmt.Fprintf(&sb, "a=T,f=100,t=d,i=%d,q=2,C=1,c=%d,r=%d,", kittyImageID, cols, rows)
		}
		fmt.Fprintf(&sb, "m=%d;%s\x1b\\", more, payload[i:end])
	}
	return sb.String()
}

// kittyDelete deletes our image and frees its data.
var kittyDelete = fmt.Sprintf("\x1b_Ga=d,d=I,i=%d,q=2\x1b\\", kittyImageID)

// iterm2Escape draws a PNG inline over cols×rows cells, keeping its
// aspect (iTerm2's OSC 1337 File).
func iterm2Escape(pngData []byte, cols, rows int) string {
	return fmt.Sprintf("\x1b]1337;File=inline=1;size=%d;width=%d;height=%d;preserveAspectRatio=1:%s\a",
		len(pngData), cols, rows, base64.StdEncoding.EncodeToString(pngData))
}

// tmuxPassthrough wraps escape sequences for tmux's passthrough: each
// sequence in its own DCS tmux; with every ESC inside doubled. seqs are
// whole sequences, each starting with ESC.
func tmuxPassthrough(seqs []string) string {
	var sb strings.Builder
	for _, s := range seqs {
		sb.WriteString("\x1bPtmux;")
		sb.WriteString(strings.ReplaceAll(s, "\x1b", "\x1b\x1b"))
		sb.WriteString("\x1b\\")
	}
	return sb.String()
}

// splitEscapes splits a run of escape sequences at each ESC that starts a
// new one (an ESC followed by _, P or ]); the ESC \ that ends one stays
// with it.
func splitEscapes(s string) []string {
	var out []string
	start := 0
	for i := 1; i+1 < len(s); i++ {
		if s[i] == 0x1b && (s[i+1] == '_' || s[i+1] == 'P' || s[i+1] == ']') {
			out = append(out, s[start:i])
			start = i
		}
	}
	return append(out, s[start:])
}

// fitCells is the largest cols×rows box of the image's aspect inside
// maxCols×maxRows, for cells of cellW×cellH pixels.
func fitCells(imgW, imgH, maxCols, maxRows, cellW, cellH int) (cols, rows int) {
	if imgW <= 0 || imgH <= 0 || maxCols <= 0 || maxRows <= 0 {
		return 0, 0
	}
	// Never enlarge past twice the image's own size: a 40-pixel icon
	// blown up to the window is mostly blur.
	maxCols = min(maxCols, max(1, 2*imgW/cellW))
	maxRows = min(maxRows, max(1, 2*imgH/cellH))
	cols = maxCols
	rows = (imgH * cols * cellW) / (imgW * cellH)
	if rows > maxRows || rows == 0 {
		rows = max(1, maxRows)
		cols = max(1, min(maxCols, (imgW*rows*cellH)/(imgH*cellW)))
	}
	return cols, max(rows, 1)
}
