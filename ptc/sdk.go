package ptc

import "github.com/dsh-go/dsh/engine"

// SDKToolsOf is what an SDK declares of defs: each tool's name,
// description, parameters and output schema, run_code left out.
func SDKToolsOf(defs []*engine.Definition) []SDKTool {
	tools := make([]SDKTool, 0, len(defs))
	for _, def := range defs {
		if def.Name == ToolName {
			continue
		}
		tools = append(tools, SDKTool{Name: def.Name, Description: def.Description, Parameters: def.Parameters, Output: def.Output.DeclaredSchema()})
	}
	return tools
}
