package dev.spindle.spark.example;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.GradientPaint;
import java.awt.Graphics2D;
import java.awt.Polygon;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.SplittableRandom;
import javax.imageio.IIOImage;
import javax.imageio.ImageIO;
import javax.imageio.ImageWriteParam;
import javax.imageio.ImageWriter;
import javax.imageio.stream.MemoryCacheImageOutputStream;

/**
 * Draws deterministic synthetic photographs: a lit gradient background, clutter, one large object
 * whose shape and hue depend on the class, edges, shading and sensor noise, encoded as JPEG. The
 * same (seed, index) always gives the same image. Thread-safe (no shared state).
 */
public final class SampleImages {
  static final int CLASSES = 10;

  private SampleImages() {}

  public static int label(long seed, long index) {
    return (int) Math.floorMod(new SplittableRandom(seed * 1_000_003L + index).nextLong(), CLASSES);
  }

  public static byte[] jpeg(long seed, long index, int width, int height) throws IOException {
    SplittableRandom rnd = new SplittableRandom(seed * 7_919L + index * 104_729L + 17);
    BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_3BYTE_BGR);
    Graphics2D g = image.createGraphics();
    try {
      g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
      drawBackground(g, rnd, width, height);
      drawClutter(g, rnd, width, height);
      drawObject(g, rnd, label(seed, index), width, height);
    } finally {
      g.dispose();
    }
    addNoise(image, rnd);
    return encode(image);
  }

  private static void drawBackground(Graphics2D g, SplittableRandom rnd, int w, int h) {
    Color top =
        Color.getHSBColor((float) rnd.nextDouble(), 0.3f, 0.5f + 0.4f * (float) rnd.nextDouble());
    Color bottom =
        Color.getHSBColor((float) rnd.nextDouble(), 0.5f, 0.2f + 0.3f * (float) rnd.nextDouble());
    g.setPaint(new GradientPaint(0, 0, top, w * (float) rnd.nextDouble(), h, bottom));
    g.fillRect(0, 0, w, h);
  }

  private static void drawClutter(Graphics2D g, SplittableRandom rnd, int w, int h) {
    int n = 6 + rnd.nextInt(10);
    for (int i = 0; i < n; i++) {
      g.setColor(
          Color.getHSBColor(
              (float) rnd.nextDouble(), 0.4f, 0.3f + 0.5f * (float) rnd.nextDouble()));
      int x = rnd.nextInt(w);
      int y = rnd.nextInt(h);
      int s = 5 + rnd.nextInt(Math.max(6, Math.min(w, h) / 4));
      if (rnd.nextBoolean()) {
        g.fillRect(x, y, s, s / 2 + 1);
      } else {
        g.setStroke(new BasicStroke(1 + rnd.nextInt(4)));
        g.drawLine(x, y, x + rnd.nextInt(-s, s + 1), y + rnd.nextInt(-s, s + 1));
      }
    }
  }

  private static void drawObject(Graphics2D g, SplittableRandom rnd, int label, int w, int h) {
    float hue = label / (float) CLASSES;
    int size = (int) (Math.min(w, h) * (0.35 + 0.3 * rnd.nextDouble()));
    int cx = w / 2 + rnd.nextInt(-w / 6, w / 6 + 1);
    int cy = h / 2 + rnd.nextInt(-h / 6, h / 6 + 1);
    Color light = Color.getHSBColor(hue, 0.8f, 0.95f);
    Color dark = Color.getHSBColor(hue, 0.9f, 0.45f);
    g.setPaint(
        new GradientPaint(
            cx - size / 2f, cy - size / 2f, light, cx + size / 2f, cy + size / 2f, dark));
    Polygon p = regularPolygon(3 + label % 5, cx, cy, size / 2, rnd.nextDouble() * Math.PI);
    if (label % 2 == 0) {
      g.fillOval(cx - size / 2, cy - size / 2, size, (int) (size * (0.6 + 0.4 * rnd.nextDouble())));
    } else {
      g.fillPolygon(p);
    }
    g.setColor(dark.darker());
    g.setStroke(new BasicStroke(2f));
    g.drawPolygon(p);
  }

  private static Polygon regularPolygon(int sides, int cx, int cy, int r, double phase) {
    Polygon p = new Polygon();
    for (int i = 0; i < sides; i++) {
      double a = phase + 2 * Math.PI * i / sides;
      p.addPoint(cx + (int) Math.round(r * Math.cos(a)), cy + (int) Math.round(r * Math.sin(a)));
    }
    return p;
  }

  private static void addNoise(BufferedImage image, SplittableRandom rnd) {
    byte[] px = ((java.awt.image.DataBufferByte) image.getRaster().getDataBuffer()).getData();
    for (int i = 0; i < px.length; i++) {
      int v = (px[i] & 0xff) + rnd.nextInt(-6, 7);
      px[i] = (byte) Math.max(0, Math.min(255, v));
    }
  }

  /** {@code image} as a JPEG of quality 0.9 (ImageIO's encoder). */
  public static byte[] encode(BufferedImage image) throws IOException {
    ImageWriter writer = ImageIO.getImageWritersByFormatName("jpeg").next();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (MemoryCacheImageOutputStream out = new MemoryCacheImageOutputStream(bytes)) {
      writer.setOutput(out);
      ImageWriteParam param = writer.getDefaultWriteParam();
      param.setCompressionMode(ImageWriteParam.MODE_EXPLICIT);
      param.setCompressionQuality(0.9f);
      writer.write(null, new IIOImage(image, null, null), param);
    } finally {
      writer.dispose();
    }
    return bytes.toByteArray();
  }
}
