const m = require(process.argv[2] || '/tmp/sdkts/ts-types.cjs')
let seed = 20240611
const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 }
const pick = a => a[Math.floor(rnd() * a.length)]
const keys = ['id', 'label', 'class', '$x', '_y', 'a1', 'my-key', 'a b', 'x|y', 'p&q', '', 'é', 'naïve', '9lives', 'quote"d', 'back\\slash', 'tab\tkey', '\u{1F600}', 'line\u2028sep']
const descs = ['Absolute file path', '  lots   of\n\tspace  ', 'a pattern like packages/*/tool-*/ over here', 'ends with */', 'nbsp\u00a0and\u3000ideographic\ufeffbom', 'nel\u0085kept', 'pipe | and & amp', '   ', 'x*/*/y']
const nums = [0, 1, 2, -5, 0.1, 1.5e-7, 1e21, 123456789012, 2.5]
const strs = ['a', 'b', 'x|y', 'quote"', '\u{1F600}', 'new\nline', '</script>', '\u2028']
function scalarSchema(depthLeft) {
  const t = pick(['string', 'number', 'integer', 'boolean', 'null'])
  const s = { type: t }
  const r = rnd()
  const vals = { string: strs, number: nums, integer: nums.filter(Number.isInteger), boolean: [true, false], null: [null] }[t]
  if (r < 0.25) s.enum = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => pick(vals))
  else if (r < 0.4) s.const = pick(vals)
  else if (r < 0.45) { s.enum = [pick(vals), pick(vals)]; s.const = s.enum[0] }
  return s
}
function gen(depth) {
  const r = rnd()
  let s
  if (depth <= 0 || r < 0.35) s = rnd() < 0.1 ? {} : scalarSchema()
  else if (r < 0.5) s = { oneOf: Array.from({ length: 2 + Math.floor(rnd() * 2) }, () => gen(depth - 1)) }
  else if (r < 0.65) s = rnd() < 0.2 ? { type: 'array' } : { type: 'array', items: gen(depth - 1) }
  else {
    s = { type: 'object' }
    const n = Math.floor(rnd() * 4)
    if (n > 0 || rnd() < 0.3) {
      s.properties = {}
      for (let i = 0; i < n; i++) s.properties[pick(keys)] = gen(depth - 1)
      const names = Object.keys(s.properties)
      if (names.length && rnd() < 0.6) s.required = names.filter(() => rnd() < 0.5)
    }
    const ap = rnd()
    if (ap < 0.3) s.additionalProperties = false
    else if (ap < 0.45) s.additionalProperties = true
  }
  if (rnd() < 0.3) s.description = pick(descs)
  if (rnd() < 0.1) s.title = 'T'
  // occasionally break it
  if (rnd() < 0.04) s[pick(['$ref', 'minimum', 'format'])] = 'x'
  if (rnd() < 0.02 && s.type === 'object') s.required = [7]
  return s
}
const schemas = []
for (let i = 0; i < 400; i++) {
  const schema = gen(1 + Math.floor(rnd() * 5))
  schemas.push({ schema, want: m.jsonSchemaToTs(schema), want1: m.jsonSchemaToTs(schema, 1) })
}
require('fs').writeFileSync(__dirname + '/upstream_schemas.json', JSON.stringify(schemas, null, 1) + '\n')
const names = ['bash', 'my-mcp.tool', 'read_file', 'Zeta', 'alpha', '\u{1F600}face', '\uFF01bang', 'a', 'ab', 'é', 'class']
const sdk = []
for (let i = 0; i < 12; i++) {
  const n = i === 0 ? 0 : 1 + Math.floor(rnd() * 6)
  const used = new Set(); const tools = []
  for (let j = 0; j < n; j++) {
    const name = pick(names); if (used.has(name)) continue; used.add(name)
    const params = gen(3); if (params.type !== undefined || params.oneOf) { params.type = 'object'; delete params.oneOf; delete params.enum; delete params.const; delete params.items }
    tools.push({ name, description: rnd() < 0.8 ? pick(descs) : '', parameters: params, output: gen(3) })
  }
  sdk.push({ tools, want: m.renderToolsSdk(tools) })
}
require('fs').writeFileSync(__dirname + '/upstream_sdk.json', JSON.stringify(sdk, null, 1) + '\n')
const c = schemas.filter(s => s.want === 'unknown').length
console.log('unknown', c, 'of', schemas.length)
