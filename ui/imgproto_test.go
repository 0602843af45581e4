package ui

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"strconv"
	"strings"
	"testing"
)

// smallImage is 5×8 pixels: a colour per column, darker downwards, so
// that it spans two sixel bands and many palette entries.
func smallImage() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 5, 8))
	cols := []color.RGBA{{255, 0, 0, 255}, {0, 200, 0, 255}, {20, 40, 250, 255}, {250, 250, 250, 255}, {90, 90, 90, 255}}
	for y := 0; y < 8; y++ {
		for x := 0; x < 5; x++ {
			c := cols[x]
			k := 8 - y
			img.SetRGBA(x, y, color.RGBA{uint8(int(c.R) * k / 8), uint8(int(c.G) * k / 8), uint8(int(c.B) * k / 8), 255})
		}
	}
	return img
}

func encodePNG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// samePixels fails unless two images have the same pixels.
func samePixels(t *testing.T, got image.Image, want *image.RGBA) {
	t.Helper()
	if got.Bounds().Size() != want.Bounds().Size() {
		t.Fatalf("size %v, want %v", got.Bounds().Size(), want.Bounds().Size())
	}
	for y := 0; y < want.Bounds().Dy(); y++ {
		for x := 0; x < want.Bounds().Dx(); x++ {
			r, g, b, a := got.At(x, y).RGBA()
			w := want.RGBAAt(x, y)
			if uint8(r>>8) != w.R || uint8(g>>8) != w.G || uint8(b>>8) != w.B || uint8(a>>8) != w.A {
				t.Fatalf("pixel %d,%d is %v, want %v", x, y, got.At(x, y), w)
			}
		}
	}
}

func TestKittyEscape(t *testing.T) {
	t.Parallel()
	img := smallImage()
	data := encodePNG(t, img)
	got := kittyEscape(data, 3, 2)
	want := "\x1b_Ga=T,f=100,t=d,i=4711,q=2,C=1,c=3,r=2,m=0;" + base64.StdEncoding.EncodeToString(data) + "\x1b\\"
	if got != want {
		t.Fatalf("kitty escape\n got %q\nwant %q", got, want)
	}
	if kittyDelete != "\x1b_Ga=d,d=I,i=4711,q=2\x1b\\" {
		t.Fatalf("kitty delete %q", kittyDelete)
	}
	// The payload decodes back to the image.
	payload := strings.TrimSuffix(strings.SplitN(got, ";", 2)[1], "\x1b\\")
	raw, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		t.Fatal(err)
	}
	back, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	samePixels(t, back, img)

	// A payload over 4096 bytes goes in chunks: the first carries the
	// keys, every one but the last says m=1, and none is over 4096.
	big := bytes.Repeat([]byte{0xa5}, 7000)
	chunks := strings.SplitAfter(kittyEscape(big, 10, 5), "\x1b\\")
	chunks = chunks[:len(chunks)-1] // the empty string after the last
	if len(chunks) != 3 {
		t.Fatalf("%d chunks: %q", len(chunks), chunks)
	}
	var joined string
	for i, c := range chunks {
		head, body, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(c, "\x1b_G"), "\x1b\\"), ";")
		wantHead := "m=1"
		if i == 0 {
			wantHead = "a=T,f=100,t=d,i=4711,q=2,C=1,c=10,r=5,m=1"
		}
		if i == len(chunks)-1 {
			wantHead = "m=0"
		}
		if head != wantHead || len(body) > 4096 {
			t.Fatalf("chunk %d: head %q, %d bytes", i, head, len(body))
		}
		joined += body
	}
	if joined != base64.StdEncoding.EncodeToString(big) {
		t.Fatal("the chunks do not join into the payload")
	}
}

func TestITerm2Escape(t *testing.T) {
	t.Parallel()
	img := smallImage()
	data := encodePNG(t, img)
	got := iterm2Escape(data, 12, 4)
	want := fmt.Sprintf("\x1b]1337;File=inline=1;size=%d;width=12;height=4;preserveAspectRatio=1:%s\a", len(data), base64.StdEncoding.EncodeToString(data))
	if got != want {
		t.Fatalf("iTerm2 escape\n got %q\nwant %q", got, want)
	}
	_, payload, _ := strings.Cut(strings.TrimSuffix(got, "\a"), ":")
	raw, _ := base64.StdEncoding.DecodeString(payload)
	back, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	samePixels(t, back, img)
}

func TestTmuxPassthrough(t *testing.T) {
	t.Parallel()
	esc := kittyEscape([]byte("ab"), 1, 1) + kittyDelete
	got := tmuxPassthrough(splitEscapes(esc))
	want := "\x1bPtmux;\x1b\x1b_Ga=T,f=100,t=d,i=4711,q=2,C=1,c=1,r=1,m=0;YWI=\x1b\x1b\\\x1b\\" +
		"\x1bPtmux;\x1b\x1b_Ga=d,d=I,i=4711,q=2\x1b\x1b\\\x1b\\"
	if got != want {
		t.Fatalf("passthrough\n got %q\nwant %q", got, want)
	}
}

// decodeSixel is a sixel decoder for what encodeSixel writes (and the
// parts of the format it uses): DCS parameters, raster attributes, colour
// definitions in RGB percent, colour selection, sixels, repeats, $ and -.
func decodeSixel(t *testing.T, s string) *image.RGBA {
	t.Helper()
	if !strings.HasPrefix(s, "\x1bP") || !strings.HasSuffix(s, "\x1b\\") {
		t.Fatalf("not a DCS string: %q", s)
	}
	body := s[2 : len(s)-2]
	q := strings.IndexByte(body, 'q')
	if q < 0 || body[:q] != "0;1;0" {
		t.Fatalf("DCS parameters %q", body[:q])
	}
	body = body[q+1:]
	num := func(i *int) int {
		j := *i
		for j < len(body) && body[j] >= '0' && body[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(body[*i:j])
		if err != nil {
			t.Fatalf("number at %d of %q", *i, body)
		}
		*i = j
		return n
	}
	i := 0
	if body[i] != '"' {
		t.Fatalf("no raster attributes: %q", body)
	}
	i++
	var ra [4]int
	for k := 0; k < 4; k++ {
		ra[k] = num(&i)
		if k < 3 {
			if body[i] != ';' {
				t.Fatalf("raster attributes: %q", body)
			}
			i++
		}
	}
	if ra[0] != 1 || ra[1] != 1 {
		t.Fatalf("pixel aspect %d:%d, want 1:1", ra[0], ra[1])
	}
	img := image.NewRGBA(image.Rect(0, 0, ra[2], ra[3]))
	palette := map[int]color.RGBA{}
	cur, x, band := -1, 0, 0
	put := func(ch byte, n int) {
		if cur < 0 {
			t.Fatal("sixel before a colour")
		}
		bits := ch - 63
		for k := 0; k < n; k++ {
			for b := 0; b < 6; b++ {
				if bits&(1<<b) != 0 {
					if x >= ra[2] || band*6+b >= ra[3] {
						t.Fatalf("pixel %d,%d outside %dx%d", x, band*6+b, ra[2], ra[3])
					}
					img.SetRGBA(x, band*6+b, palette[cur])
				}
			}
			x++
		}
	}
	for i < len(body) {
		switch c := body[i]; {
		case c == '#':
			i++
			n := num(&i)
			if i < len(body) && body[i] == ';' {
				i++
				if num(&i) != 2 {
					t.Fatal("colour not in RGB")
				}
				var rgb [3]int
				for k := range rgb {
					i++ // ';'
					rgb[k] = num(&i)
				}
				palette[n] = color.RGBA{uint8((rgb[0]*255 + 50) / 100), uint8((rgb[1]*255 + 50) / 100), uint8((rgb[2]*255 + 50) / 100), 255}
			} else {
				if _, ok := palette[n]; !ok {
					t.Fatalf("colour %d selected before it is defined", n)
				}
				cur = n
			}
		case c == '!':
			i++
			n := num(&i)
			put(body[i], n)
			i++
		case c == '$':
			x = 0
			i++
		case c == '-':
			x, band = 0, band+1
			i++
		case c >= 63 && c <= 126:
			put(c, 1)
			i++
		default:
			t.Fatalf("unexpected byte %q at %d", c, i)
		}
	}
	return img
}

func TestSixelEncodesWhatDecodesBack(t *testing.T) {
	t.Parallel()
	img := smallImage()
	got := encodeSixel(img)
	// Pinned: DCS with P2=1 and 1:1 raster attributes, the palette
	// entries used, band one (rows 0-5) one colour a pass with $ between
	// passes, - and band two (rows 6-7), ST.
	const want = "\x1bP0;1;0q\"1;1;5;8" +
		"#0;2;0;0;0#1;2;0;0;20#2;2;0;0;40#6;2;0;16;0#9;2;0;16;60#10;2;0;16;80#11;2;0;16;100#12;2;0;33;0#18;2;0;50;0" +
		"#24;2;0;67;0#30;2;0;83;0#42;2;20;0;0#49;2;20;16;20#84;2;40;0;0#98;2;40;33;40#104;2;40;50;40#126;2;60;0;0" +
		"#168;2;80;0;0#196;2;80;67;80#202;2;80;83;80#210;2;100;0;0#251;2;100;100;100#252;2;20;20;20#254;2;60;60;60" +
		"#210@$#30?@$#11??@$#251???@$#98???_B$#168E$#24?E$#10??E$#202???A$#196???C$#252!4?K$#126G$#18?G$#9??G$#254???G" +
		"$#84o$#12?o$#2??o$#104???O$#49!4?o" +
		"-#42B$#6?B??@$#1??B$#252???@$#49???A$#0!4?A\x1b\\"
	if got != want {
		t.Fatalf("sixel\n got %q\nwant %q", got, want)
	}
	back := decodeSixel(t, got)
	// Every pixel decodes to its palette colour: the image's colour
	// quantized, at sixel's percent precision.
	wantImg := image.NewRGBA(img.Bounds())
	for y := 0; y < 8; y++ {
		for x := 0; x < 5; x++ {
			p := sixelPalette[sixelIndex(flatten(img.At(x, y)))]
			pc := func(v uint8) uint8 { return uint8((sixelPercent(v)*255 + 50) / 100) }
			wantImg.SetRGBA(x, y, color.RGBA{pc(p.R), pc(p.G), pc(p.B), 255})
		}
	}
	samePixels(t, back, wantImg)
	// And the quantized colours are near the image's: no channel is off
	// by more than half a step of the cube.
	for y := 0; y < 8; y++ {
		for x := 0; x < 5; x++ {
			o, q := img.RGBAAt(x, y), back.RGBAAt(x, y)
			if absDiff(o.R, q.R) > 26 || absDiff(o.G, q.G) > 22 || absDiff(o.B, q.B) > 26 {
				t.Fatalf("pixel %d,%d: %v quantized to %v", x, y, o, q)
			}
		}
	}
	// A wide flat row uses the repeat introducer.
	flat := image.NewRGBA(image.Rect(0, 0, 40, 6))
	for i := range flat.Pix {
		flat.Pix[i] = 255
	}
	if s := encodeSixel(flat); !strings.HasSuffix(s, "#251!40~\x1b\\") {
		t.Fatalf("flat white image: %q", s)
	}
}

func TestParseProbe(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, answer string
		want         termProbe
	}{
		{"kitty", "\x1b_Gi=31;OK\x1b\\\x1b[6;20;10t\x1b[?62;22;52c", termProbe{answered: true, kitty: true, cellW: 10, cellH: 20}},
		{"xterm with sixel", "\x1b[6;16;8t\x1b[?63;1;2;4;6;9;15;22c", termProbe{answered: true, sixel: true, cellW: 8, cellH: 16}},
		{"xterm without", "\x1b[?64;1;2;6;9;15;16;17;18;21;22;28c", termProbe{answered: true}},
		{"kitty error", "\x1b_Gi=31;ENOTSUPPORTED:no\x1b\\\x1b[?62c", termProbe{answered: true}},
		{"silent", "", termProbe{}},
	}
	for _, c := range cases {
		if got := parseProbe([]byte(c.answer)); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		if done := probeDone([]byte(c.answer)); done != c.want.answered {
			t.Errorf("%s: done %v", c.name, done)
		}
	}
	if !strings.HasSuffix(probeQuery, "\x1b[c") || !strings.HasPrefix(probeQuery, "\x1b_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\x1b\\") {
		t.Fatalf("probe query %q", probeQuery)
	}
}

func TestChooseProtocol(t *testing.T) {
	t.Parallel()
	env := fakeEnv
	cases := []struct {
		name        string
		forced      ImageProtocol
		env         func(string) string
		passthrough bool
		probe       termProbe
		want        ImageProtocol
		tmux, ask   bool
	}{
		{"kitty", ImageAuto, env("TERM", "xterm-kitty", "KITTY_WINDOW_ID", "1"), false, termProbe{}, ImageKitty, false, false},
		{"ghostty", ImageAuto, env("TERM_PROGRAM", "ghostty"), false, termProbe{}, ImageKitty, false, false},
		{"wezterm", ImageAuto, env("TERM_PROGRAM", "WezTerm"), false, termProbe{}, ImageITerm2, false, false},
		{"iterm2", ImageAuto, env("TERM_PROGRAM", "iTerm.app"), false, termProbe{}, ImageITerm2, false, false},
		{"foot", ImageAuto, env("TERM", "foot-extra"), false, termProbe{}, ImageSixel, false, false},
		{"windows terminal", ImageAuto, env("WT_SESSION", "abc"), false, termProbe{}, ImageSixel, false, false},
		{"xterm answering sixel", ImageAuto, env("TERM", "xterm-256color"), false, termProbe{answered: true, sixel: true}, ImageSixel, false, true},
		{"unknown answering kitty", "", env("TERM", "xterm-256color"), false, termProbe{answered: true, kitty: true, sixel: true}, ImageKitty, false, true},
		{"xterm plain", ImageAuto, env("TERM", "xterm-256color"), false, termProbe{answered: true}, ImageHalfBlocks, false, true},
		{"tmux", ImageAuto, env("TMUX", "/tmp/x,1,0", "KITTY_WINDOW_ID", "1"), false, termProbe{}, ImageHalfBlocks, false, false},
		{"tmux passthrough in kitty", ImageAuto, env("TMUX", "/tmp/x,1,0", "KITTY_WINDOW_ID", "1"), true, termProbe{}, ImageKitty, true, false},
		{"tmux passthrough unknown", ImageAuto, env("TMUX", "/tmp/x,1,0"), true, termProbe{}, ImageHalfBlocks, false, false},
		{"forced", ImageSixel, env("KITTY_WINDOW_ID", "1"), false, termProbe{}, ImageSixel, false, false},
		{"forced in tmux", ImageKitty, env("TMUX", "/tmp/x,1,0"), false, termProbe{}, ImageKitty, true, false},
		{"forced halfblocks in tmux", ImageHalfBlocks, env("TMUX", "/tmp/x,1,0"), false, termProbe{}, ImageHalfBlocks, false, false},
		{"dumb", ImageAuto, env("TERM", "dumb"), false, termProbe{}, ImageHalfBlocks, false, false},
	}
	for _, c := range cases {
		got := chooseProtocol(c.forced, c.env, c.passthrough, c.probe)
		if got.proto != c.want || got.tmux != c.tmux || got.reason == "" {
			t.Errorf("%s: %+v, want %s (tmux %v)", c.name, got, c.want, c.tmux)
		}
		if ask := needsProbe(c.forced, c.env); ask != c.ask {
			t.Errorf("%s: needsProbe %v, want %v", c.name, ask, c.ask)
		}
	}
}

func TestFitCells(t *testing.T) {
	t.Parallel()
	cases := []struct{ iw, ih, mc, mr, cw, ch, c, r int }{
		{640, 480, 100, 40, 10, 20, 100, 37}, // width-bound
		{640, 480, 200, 30, 10, 20, 80, 30},  // height-bound
		{40, 20, 200, 60, 10, 20, 8, 2},      // never more than twice the image's size
		{1000, 10, 50, 40, 10, 20, 50, 1},
	}
	for _, c := range cases {
		if gc, gr := fitCells(c.iw, c.ih, c.mc, c.mr, c.cw, c.ch); gc != c.c || gr != c.r {
			t.Errorf("fitCells(%d×%d in %d×%d, cell %d×%d) = %d×%d, want %d×%d", c.iw, c.ih, c.mc, c.mr, c.cw, c.ch, gc, gr, c.c, c.r)
		}
	}
}

// pngClaiming is a PNG whose header claims w×h pixels (valid signature
// and IHDR, checksum included) and holds no pixel data.
func pngClaiming(w, h uint32) []byte {
	var buf bytes.Buffer
	buf.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 6 // 8-bit RGBA
	binary.Write(&buf, binary.BigEndian, uint32(13))
	chunk := append([]byte("IHDR"), ihdr...)
	buf.Write(chunk)
	binary.Write(&buf, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	return buf.Bytes()
}

func TestDecodeLimitedRefusesHugeImages(t *testing.T) {
	t.Parallel()
	if _, err := decodeLimited("image/png", pngClaiming(100000, 100000)); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("a 100000×100000 PNG: %v", err)
	}
	if _, err := decodeLimited("image/png", pngClaiming(8000, 8000)); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("a 64-megapixel PNG: %v", err)
	}
	if _, err := decodeLimited("image/webp", []byte("RIFF")); err == nil {
		t.Fatal("webp should be refused")
	}
	img, err := decodeLimited("image/png", encodePNG(t, smallImage()))
	if err != nil {
		t.Fatal(err)
	}
	samePixels(t, img, smallImage())
}
