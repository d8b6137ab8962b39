// A run_code program for TestMCPNpm: list a directory and read a file of
// the imported filesystem server (two calls overlapped), then try the write
// the policy denies and catch its ToolCallError. DIR is replaced by the
// served directory, as a string literal.
const dir: string = DIR;
const [listing, file] = await Promise.all([
  tools.fs__list_directory({ path: dir + "/docs" }),
  tools.fs__read_text_file({ path: dir + "/docs/a.txt" }),
]);
let denied: JsonValue = null;
try {
  await tools.fs__write_file({ path: dir + "/new.txt", content: "written" });
} catch (e) {
  if (!(e instanceof ToolCallError)) throw e;
  denied = { isToolCallError: e.name === "ToolCallError", toolName: e.toolName, message: e.message };
}
return { entries: listing.content.split("\n").sort(), text: file.content, denied };
