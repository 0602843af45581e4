package jupyter

// The wire format: message headers, the v1 kernel websocket binary framing
// and the legacy JSON framing, both ways.

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// Header is a Jupyter message header.
type Header struct {
	MsgID    string `json:"msg_id"`
	MsgType  string `json:"msg_type"`
	Session  string `json:"session"`
	Username string `json:"username"`
	Date     string `json:"date"`
	Version  string `json:"version"`
}

// Message is one Jupyter message as it crossed the websocket.
type Message struct {
	Channel      string          `json:"channel"` // shell, iopub, stdin, control
	Header       Header          `json:"header"`
	ParentHeader Header          `json:"parent_header"`
	Metadata     json.RawMessage `json:"metadata"`
	Content      json.RawMessage `json:"content"`
	Buffers      [][]byte        `json:"-"`
}

// ProtocolV1 is the binary kernel websocket subprotocol of jupyter-server 2.x
// and 1.17+.
const ProtocolV1 = "v1.kernel.websocket.jupyter.org"

// protocolVersion is the Jupyter messaging protocol version we speak.
const protocolVersion = "5.3"

func (k *KernelConn) newHeader(msgType string) Header {
	return Header{
		MsgID:    newID(),
		MsgType:  msgType,
		Session:  k.sessionID,
		Username: "jupyter-mcp-server",
		Date:     time.Now().UTC().Format("2006-01-02T15:04:05.000000Z"),
		Version:  protocolVersion,
	}
}

// encodeFrame builds the websocket frame of one message in proto: v1
// binary framing, or legacy JSON text when proto is not ProtocolV1. It
// returns the websocket message type with the frame.
func encodeFrame(proto, channel string, h, parent Header, content []byte) (int, []byte, error) {
	hb, err := json.Marshal(h)
	if err != nil {
		return 0, nil, err
	}
	pb := []byte("{}")
	if parent.MsgID != "" {
		if pb, err = json.Marshal(parent); err != nil {
			return 0, nil, err
		}
	}
	if proto == ProtocolV1 {
		return websocket.BinaryMessage, encodeV1(channel, [][]byte{hb, pb, []byte("{}"), content}), nil
	}
	frame, err := json.Marshal(struct {
		Channel      string          `json:"channel"`
		Header       json.RawMessage `json:"header"`
		ParentHeader json.RawMessage `json:"parent_header"`
		Metadata     json.RawMessage `json:"metadata"`
		Content      json.RawMessage `json:"content"`
		Buffers      []string        `json:"buffers"`
	}{channel, hb, pb, json.RawMessage("{}"), content, []string{}})
	if err != nil {
		return 0, nil, err
	}
	return websocket.TextMessage, frame, nil
}

// decodeFrame parses one websocket frame received in proto.
func decodeFrame(proto string, mtype int, data []byte) (Message, error) {
	if proto == ProtocolV1 {
		return decodeV1(data)
	}
	return decodeLegacy(mtype, data)
}

// encodeV1 frames parts for the v1 kernel websocket protocol: a uint64
// little-endian count of offsets, the offsets (the channel name's start,
// each part's start, and the end of the last part), then the channel name
// and the parts.
func encodeV1(channel string, parts [][]byte) []byte {
	n := len(parts) + 2 // channel start, one start per part, final end
	headerLen := 8 * (1 + n)
	total := headerLen + len(channel)
	for _, p := range parts {
		total += len(p)
	}
	buf := make([]byte, headerLen, total)
	binary.LittleEndian.PutUint64(buf[0:], uint64(n))
	off := uint64(headerLen)
	binary.LittleEndian.PutUint64(buf[8:], off)
	off += uint64(len(channel))
	for i, p := range parts {
		binary.LittleEndian.PutUint64(buf[8*(i+2):], off)
		off += uint64(len(p))
	}
	binary.LittleEndian.PutUint64(buf[8*(n):], off)
	buf = append(buf, channel...)
	for _, p := range parts {
		buf = append(buf, p...)
	}
	return buf
}

// splitV1 undoes encodeV1: it returns the channel and the parts.
func splitV1(data []byte) (string, [][]byte, error) {
	if len(data) < 8 {
		return "", nil, errors.New("v1 frame shorter than its offset count")
	}
	n := binary.LittleEndian.Uint64(data)
	if n < 2 || n > uint64(len(data))/8-1 {
		return "", nil, fmt.Errorf("v1 frame with %d offsets in %d bytes", n, len(data))
	}
	// Real messages have 4 to 6 parts: the offsets stay on the stack.
	var small [10]uint64
	var offs []uint64
	if n <= uint64(len(small)) {
		offs = small[:n]
	} else {
		offs = make([]uint64, n)
	}
	for i := range offs {
		offs[i] = binary.LittleEndian.Uint64(data[8*(i+1):])
		if offs[i] > uint64(len(data)) || (i > 0 && offs[i] < offs[i-1]) {
			return "", nil, errors.New("v1 frame with offsets out of order or range")
		}
	}
	channel := channelName(data[offs[0]:offs[1]])
	parts := make([][]byte, 0, n-2)
	for i := 1; i < int(n)-1; i++ {
		parts = append(parts, data[offs[i]:offs[i+1]])
	}
	return channel, parts, nil
}

// decodeV1 parses a v1 frame: parts are header, parent_header, metadata,
// content, then binary buffers.
func decodeV1(data []byte) (Message, error) {
	channel, parts, err := splitV1(data)
	if err != nil {
		return Message{}, err
	}
	if len(parts) < 4 {
		return Message{}, fmt.Errorf("v1 frame with %d parts, want at least 4", len(parts))
	}
	m := Message{Channel: channel, Metadata: parts[2], Content: parts[3]}
	if err := decodeHeader(parts[0], &m.Header); err != nil {
		return Message{}, fmt.Errorf("v1 header: %w", err)
	}
	if err := decodeHeader(parts[1], &m.ParentHeader); err != nil {
		return Message{}, fmt.Errorf("v1 parent_header: %w", err)
	}
	if len(parts) > 4 {
		m.Buffers = parts[4:]
	}
	return m, nil
}

// channelName returns the channel of a frame, without allocating for the
// four names the protocol has.
func channelName(b []byte) string {
	switch string(b) {
	case "iopub":
		return "iopub"
	case "shell":
		return "shell"
	case "stdin":
		return "stdin"
	case "control":
		return "control"
	}
	return string(b)
}

// decodeHeader parses a message header. Every message carries two, and
// encoding/json's reflection over them was a quarter of the reader's CPU,
// so the usual shape (a flat object of plain strings) is parsed by hand,
// into substrings of one string; anything else goes to encoding/json.
func decodeHeader(data []byte, h *Header) error {
	if fastHeader(data, h) {
		return nil
	}
	*h = Header{}
	return json.Unmarshal(data, h)
}

// fastHeader parses data into h when data is a flat JSON object whose
// values are strings without escapes or non-ASCII bytes, or null. It
// reports false, with h in any state, for anything else, including what
// encoding/json would treat differently (keys matching a field only
// case-insensitively, a non-string value for a field).
func fastHeader(data []byte, h *Header) bool {
	*h = Header{}
	if string(data) == "{}" {
		return true // the parent header of unsolicited messages
	}
	s := string(data) // one allocation; the fields are substrings of it
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return false
	}
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return skipSpace(s, i+1) == len(s)
	}
	for {
		key, j, ok := plainString(s, i)
		if !ok {
			return false
		}
		i = skipSpace(s, j)
		if i >= len(s) || s[i] != ':' {
			return false
		}
		i = skipSpace(s, i+1)
		field := headerField(h, key)
		if field == nil && isHeaderKeyFold(key) {
			return false
		}
		switch {
		case strings.HasPrefix(s[i:], "null"):
			// encoding/json leaves a string field alone for null.
			i += 4
		case i < len(s) && s[i] == '"':
			val, j, ok := plainString(s, i)
			if !ok {
				return false
			}
			if field != nil {
				*field = val
			}
			i = j
		default:
			return false
		}
		i = skipSpace(s, i)
		if i >= len(s) {
			return false
		}
		switch s[i] {
		case ',':
			i = skipSpace(s, i+1)
		case '}':
			return skipSpace(s, i+1) == len(s)
		default:
			return false
		}
	}
}

// headerField returns the field of h that key names exactly, or nil.
func headerField(h *Header, key string) *string {
	switch key {
	case "msg_id":
		return &h.MsgID
	case "msg_type":
		return &h.MsgType
	case "session":
		return &h.Session
	case "username":
		return &h.Username
	case "date":
		return &h.Date
	case "version":
		return &h.Version
	}
	return nil
}

// isHeaderKeyFold reports whether key names a header field ignoring case,
// which encoding/json would honour.
func isHeaderKeyFold(key string) bool {
	for _, k := range [...]string{"msg_id", "msg_type", "session", "username", "date", "version"} {
		if strings.EqualFold(key, k) {
			return true
		}
	}
	return false
}

// plainString reads the JSON string starting at s[i] when it has no escapes
// and only printable ASCII, returning its contents and the index after it.
func plainString(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return s[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return "", 0, false
		}
	}
	return "", 0, false
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// decodeLegacy parses a legacy frame: JSON text, or (when the message has
// binary buffers) a binary frame of a uint32 big-endian count, uint32
// big-endian offsets, the JSON message and the buffers.
func decodeLegacy(mtype int, data []byte) (Message, error) {
	var bufs [][]byte
	if mtype == websocket.BinaryMessage {
		if len(data) < 4 {
			return Message{}, errors.New("legacy binary frame too short")
		}
		n := binary.BigEndian.Uint32(data)
		if n == 0 || uint64(n) > uint64(len(data))/4-1 {
			return Message{}, errors.New("legacy binary frame with a bad count")
		}
		offs := make([]int, n+1)
		for i := 0; i < int(n); i++ {
			offs[i] = int(binary.BigEndian.Uint32(data[4*(i+1):]))
			if offs[i] > len(data) || (i > 0 && offs[i] < offs[i-1]) {
				return Message{}, errors.New("legacy binary frame with bad offsets")
			}
		}
		offs[n] = len(data)
		parts := make([][]byte, n)
		for i := range parts {
			parts[i] = data[offs[i]:offs[i+1]]
		}
		data, bufs = parts[0], parts[1:]
	}
	var m Message
	if err := json.Unmarshal(data, &m); err != nil {
		return Message{}, err
	}
	m.Buffers = bufs
	return m, nil
}

// newID returns a random UUID-shaped id; the server uses session ids as
// ZeroMQ identities, so they must be unique.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
