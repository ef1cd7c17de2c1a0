// `npm run bench`: runs every suite in bench/suites/ (or those named on the command line) in
// one process run, each comparing api-blocks with its named peer side by side.
import { readdirSync } from 'node:fs'

const wanted = process.argv.slice(2)
const suites = readdirSync(new URL('./suites/', import.meta.url))
  .filter((file) => file.endsWith('.ts'))
  .filter((file) => wanted.length === 0 || wanted.includes(file.replace(/\.ts$/, '')))
  .sort()

console.log(`api-blocks benchmarks — node ${process.version}, ${new Date().toISOString()}`)
for (const file of suites) {
  console.log(`\n## ${file.replace(/\.ts$/, '')}`)
  const suite = (await import(`./suites/${file}`)) as { default: () => Promise<void> }
  await suite.default()
}
