/**
 * Configuration: every {@code spark.spindle.*} key with its default, documentation and parser, in
 * one place ({@link dev.spindle.spark.config.SpindleConfig}); the example configuration file and
 * the README's key table are rendered from it ({@link dev.spindle.spark.config.ConfigDocs}).
 */
package dev.spindle.spark.config;
