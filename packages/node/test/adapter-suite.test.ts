import { runAdapterSuite } from '@api-blocks/adapter-suite'
import { toNodeListener } from '../src/index.ts'
import { listen } from './start.ts'

runAdapterSuite('node:http', (handler) => listen(toNodeListener(handler)))
