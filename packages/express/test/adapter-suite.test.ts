import { runAdapterSuite } from '@api-blocks/adapter-suite'
import express from 'express'
import { toExpressHandler } from '../src/index.ts'
import { listen } from './start.ts'

runAdapterSuite('express', (handler) => listen(express().use(toExpressHandler(handler))))
