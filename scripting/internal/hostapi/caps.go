package hostapi

import "github.com/dsh-go/dsh/internal/textcap"

// MaxErrorText bounds, in bytes, each text of an error a plugin's script
// raises into Go (a tool body's, a policy's, a listener's, a renderer's,
// a top level's): its message, and its name and code when it is a coded
// error. A longer text is cut between characters and ends with textcap's
// marker ("… (truncated)"); the hosts read only its prefix, so a thrown
// 100-million-character message is not copied on its way to the model.
const MaxErrorText = 16 << 10

// ErrorText is s cut to [MaxErrorText] bytes, marked when cut.
func ErrorText(s string) string { return textcap.String(s, MaxErrorText) }

// MaxLogMessage bounds, in bytes, the message of a line a script logs
// (dsh.log): the bound of a log message an MCP client is sent.
const MaxLogMessage = 16 << 10
