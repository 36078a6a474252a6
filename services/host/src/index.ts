export { ConfigError, type ConfigOverrides, configPath, HostConfig, loadConfig } from './config.js';
export { hostProjectors } from './projectors.js';
