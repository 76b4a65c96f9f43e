package dev.spindle.spark.train;

import java.io.Serializable;
import java.util.List;

/**
 * What {@code train} runs on each rank, read on the driver: the user's script and how to start it.
 * Immutable; shipped to executors.
 *
 * @param python the interpreter (a command on the executor's PATH or an absolute path)
 * @param script the training script, an absolute path readable on every executor's node
 * @param args the script's arguments
 * @param clientDir the Python client's directory ({@code loader-gpu/python}), put on the script's
 *     {@code PYTHONPATH}
 * @param nprocPerExecutor the most ranks one executor may run; 0 = no limit
 * @param maxRestarts how many times failed trainers are restarted from their saved states
 */
public record TrainSettings(
    String python,
    String script,
    List<String> args,
    String clientDir,
    int nprocPerExecutor,
    int maxRestarts)
    implements Serializable {
  public TrainSettings {
    args = List.copyOf(args);
  }
}
