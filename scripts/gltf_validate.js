// Runs the Khronos glTF Validator on each file given; prints one JSON line per file with the
// numbers of errors, warnings, infos and hints, and the first messages. Exit 1 if any file has
// an error or a warning (our files must be clean), 2 if a file cannot be read.
const fs = require('fs');
const path = require('path');
const validator = require(path.join(__dirname, '..', '.deps', 'npm', 'node_modules', 'gltf-validator'));

async function main() {
  let bad = 0;
  for (const file of process.argv.slice(2)) {
    let data;
    try { data = new Uint8Array(fs.readFileSync(file)); }
    catch (e) { console.log(JSON.stringify({file, error: String(e)})); process.exitCode = 2; return; }
    const report = await validator.validateBytes(data, {
      uri: file,
      maxIssues: 50,
      externalResourceFunction: (uri) => new Promise((resolve, reject) => {
        fs.readFile(path.resolve(path.dirname(file), decodeURIComponent(uri)), (err, d) => err ? reject(err) : resolve(new Uint8Array(d)));
      }),
    });
    const i = report.issues;
    const msgs = i.messages.filter(m => m.severity <= 1).slice(0, 8).map(m => `${m.code} ${m.pointer || ''}: ${m.message}`);
    console.log(JSON.stringify({file, errors: i.numErrors, warnings: i.numWarnings, infos: i.numInfos, hints: i.numHints, messages: msgs}));
    if (i.numErrors > 0 || i.numWarnings > 0) bad++;
  }
  if (bad) process.exitCode = 1;
}
main().catch(e => { console.error(e); process.exitCode = 2; });
