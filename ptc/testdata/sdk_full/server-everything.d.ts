type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }

interface ToolArgsMap {
  /** Echoes back the input string */
  everything__echo: {
    /** Message to echo */
    message: string;
  } & Record<string, JsonValue>;
  /** Demonstrates how annotations can be used to provide metadata about content. */
  "everything__get-annotated-message": {
    /** Type of message to demonstrate different annotation patterns */
    messageType: "error" | "success" | "debug";
    /** Whether to include an example image */
    includeImage?: boolean;
  } & Record<string, JsonValue>;
  /** Returns all environment variables, helpful for debugging MCP server configuration */
  "everything__get-env": Record<string, JsonValue>;
  /** Returns up to ten resource links that reference different types of resources */
  "everything__get-resource-links": {
    /** Number of resource links to return (1-10) */
    count?: number;
  } & Record<string, JsonValue>;
  /** Returns a resource reference that can be used by MCP clients */
  "everything__get-resource-reference": {
    resourceType?: "Text" | "Blob";
    /** ID of the text resource to fetch */
    resourceId?: number;
  } & Record<string, JsonValue>;
  /** Returns structured content along with an output schema for client data validation */
  "everything__get-structured-content": {
    /** Choose city */
    location: "New York" | "Chicago" | "Los Angeles";
  } & Record<string, JsonValue>;
  /** Returns the sum of two numbers */
  "everything__get-sum": {
    /** First number */
    a: number;
    /** Second number */
    b: number;
  } & Record<string, JsonValue>;
  /** Returns a tiny MCP logo image. */
  "everything__get-tiny-image": Record<string, JsonValue>;
  /** Compresses a single file using gzip compression. Depending upon the selected output type, returns either the compressed data as a gzipped resource or a resource link, allowing it to be downloaded in a subsequent request during the current session. */
  "everything__gzip-file-as-resource": {
    /** Name of the output file */
    name?: string;
    /** URL or data URI of the file content to compress */
    data?: string;
    /** How the resulting gzipped file should be returned. 'resourceLink' returns a link to a resource that can be read later, 'resource' returns a full resource object. */
    outputType?: "resourceLink" | "resource";
  } & Record<string, JsonValue>;
  /** Simulates a deep research operation that gathers, analyzes, and synthesizes information. Demonstrates MCP task-based operations with progress through multiple stages. If 'ambiguous' is true and client supports elicitation, sends an elicitation request for clarification. */
  "everything__simulate-research-query": {
    /** The research topic to investigate */
    topic: string;
    /** Simulate an ambiguous query that requires clarification (triggers input_required status) */
    ambiguous?: boolean;
  } & Record<string, JsonValue>;
  /** Toggles simulated, random-leveled logging on or off. */
  "everything__toggle-simulated-logging": Record<string, JsonValue>;
  /** Toggles simulated resource subscription updates on or off. */
  "everything__toggle-subscriber-updates": Record<string, JsonValue>;
  /** Demonstrates a long running operation with progress updates. */
  "everything__trigger-long-running-operation": {
    /** Duration of the operation in seconds */
    duration?: number;
    /** Number of steps in the operation */
    steps?: number;
  } & Record<string, JsonValue>;
}

interface ToolOutputMap {
  everything__echo: unknown;
  "everything__get-annotated-message": unknown;
  "everything__get-env": unknown;
  "everything__get-resource-links": unknown;
  "everything__get-resource-reference": unknown;
  "everything__get-structured-content": {
    /** Temperature in celsius */
    temperature: number;
    /** Weather conditions description */
    conditions: string;
    /** Humidity percentage */
    humidity: number;
  };
  "everything__get-sum": unknown;
  "everything__get-tiny-image": unknown;
  "everything__gzip-file-as-resource": unknown;
  "everything__simulate-research-query": unknown;
  "everything__toggle-simulated-logging": unknown;
  "everything__toggle-subscriber-updates": unknown;
  "everything__trigger-long-running-operation": unknown;
}

type ToolName = keyof ToolOutputMap

declare class ToolCallError extends Error {
  readonly name: "ToolCallError";
  readonly toolName: ToolName;
}

declare const tools: {
  [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]>;
}
