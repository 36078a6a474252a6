#!/usr/bin/env node
import './main.js';
