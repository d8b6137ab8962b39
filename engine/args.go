package engine

import "github.com/dsh-go/dsh/dsl"

// parseArguments reads the raw arguments text a model emitted (§5.1): empty
// is {}, valid JSON is its value, anything else is passed on as the string.
func parseArguments(text string) any {
	if text == "" {
		return dsl.NewObject()
	}
	v, err := dsl.Unmarshal([]byte(text))
	if err != nil {
		return text
	}
	return v
}
